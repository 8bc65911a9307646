import { bearerTokenMatches } from './api-auth.guard';

describe('bearerTokenMatches', () => {
  const token = 'tok_0123456789abcdef';

  it('accepts the configured token with any casing of the scheme and surrounding spaces', () => {
    expect(bearerTokenMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerTokenMatches(`  bearer   ${token}  `, token)).toBe(true);
  });

  it.each([
    ['wrong token', `Bearer ${token}x`],
    ['prefix of the token', `Bearer ${token.slice(0, 5)}`],
    ['another scheme', `Basic ${token}`],
    ['bare token', token],
    ['empty', ''],
    ['missing', undefined],
    ['repeated header', [`Bearer ${token}`, `Bearer ${token}`]],
  ])('rejects %s', (_label, header) => {
    expect(bearerTokenMatches(header as string | string[] | undefined, token)).toBe(false);
  });

  it('rejects everything when no token is configured (secure default)', () => {
    expect(bearerTokenMatches('Bearer anything', undefined)).toBe(false);
    expect(bearerTokenMatches('Bearer ', '')).toBe(false);
  });
});
