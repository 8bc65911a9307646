import { RbacRecordTooLargeError, jsonBytesAtLeast } from './record-size';

const compactBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('jsonBytesAtLeast', () => {
  const NO_LIMIT = Number.MAX_SAFE_INTEGER;

  it.each([
    ['a record', { last_update: 1700000000, permissions: { admin: ['*:*'], '7': ['sales/*:get', '%r{x/[0-9]+}:post'] } }],
    ['empty containers', { a: [], b: {}, c: [{}] }],
    ['scalars', [1, -2.5, true, false, null, 'text']],
    ['a bare string', 'permissions'],
  ])('is the exact compact JSON size of ASCII data: %s', (_name, value) => {
    expect(jsonBytesAtLeast(value, NO_LIMIT)).toBe(compactBytes(value));
  });

  it.each([
    ['non-ASCII text', { role: ['é/ü/日本:get', '😀:get'] }],
    ['characters JSON escapes', { 'a"b': ['line\nbreak\\:get'] }],
    ['members JSON leaves out', { kept: 1, gone: undefined, fn: () => 1 }],
  ])('never counts more than the compact JSON size: %s', (_name, value) => {
    expect(jsonBytesAtLeast(value, NO_LIMIT)).toBeLessThanOrEqual(compactBytes(value));
  });

  it('stops counting soon after the limit, however large the value', () => {
    const huge = { permissions: Object.fromEntries(Array.from({ length: 2000 }, (_, role) => [`r${role}`, Array(500).fill('tenant/section/items/*:get')])) };
    const limit = 64 * 1024;
    const counted = jsonBytesAtLeast(huge, limit);
    expect(counted).toBeGreaterThan(limit);
    // At most one more string, key or array header past the limit.
    expect(counted).toBeLessThan(limit + 1024);
    expect(jsonBytesAtLeast([new Array(1_000_000).fill(0)], 1024)).toBe(1_000_003);
  });

  it('walks deep nesting without recursion', () => {
    let nested: unknown = 'leaf';
    for (let depth = 0; depth < 200_000; depth++) nested = [nested];
    expect(jsonBytesAtLeast(nested, NO_LIMIT)).toBe(400_006);
  });
});

describe('RbacRecordTooLargeError', () => {
  it('names the size, the limit and the option', () => {
    const error = new RbacRecordTooLargeError(13_631_488, 1_048_576);
    expect(error.message).toBe('the RBAC record is 13631488 bytes as JSON, more than rbac_record_max_bytes (1048576)');
    expect([error.bytes, error.limit]).toEqual([13_631_488, 1_048_576]);
  });
});
