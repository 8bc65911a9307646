import { requestIdFor } from './request-id';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestIdFor', () => {
  it('keeps a caller id made of safe characters', () => {
    expect(requestIdFor('abc.DEF_1:2-3')).toBe('abc.DEF_1:2-3');
    expect(requestIdFor('x'.repeat(128))).toBe('x'.repeat(128));
  });

  it.each([undefined, '', 'x'.repeat(129), 'has space', 'new\nline', '<script>', ['a', 'b']])(
    'replaces %p with a fresh UUID',
    (header) => {
      expect(requestIdFor(header as string | string[] | undefined)).toMatch(UUID);
    },
  );

  it('gives each request its own id', () => {
    expect(requestIdFor(undefined)).not.toBe(requestIdFor(undefined));
  });
});
