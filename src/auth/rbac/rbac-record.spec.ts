import { parseLastUpdate, parseRbacRecord, serializeRbacRecord } from './rbac-record';

describe('parseLastUpdate', () => {
  it('reads seconds, milliseconds and digit strings', () => {
    expect(parseLastUpdate(1_700_000_000)).toBe(1_700_000_000);
    expect(parseLastUpdate(1_700_000_000_123)).toBe(1_700_000_000);
    expect(parseLastUpdate('1700000000')).toBe(1_700_000_000);
    expect(parseLastUpdate(1_700_000_000.9)).toBe(1_700_000_000);
  });

  it.each([undefined, null, -1, 'yesterday', '', Number.NaN, Number.POSITIVE_INFINITY, {}])('rejects %p', (value) => {
    expect(parseLastUpdate(value)).toBeUndefined();
  });
});

describe('parseRbacRecord', () => {
  it('accepts an object and a JSON string alike; numeric role keys become strings', () => {
    const record = { last_update: 1_700_000_000, permissions: { 1: ['reports:get'], admin: ['*:*'] } };
    const fromObject = parseRbacRecord(record);
    const fromString = parseRbacRecord(JSON.stringify(record));
    expect(fromObject).toEqual(fromString);
    expect(fromObject).toEqual({
      ok: true,
      record: { lastUpdate: 1_700_000_000, permissions: { '1': ['reports:get'], admin: ['*:*'] } },
      warnings: [],
    });
  });

  it('skips malformed role entries and permissions, keeping the rest', () => {
    const result = parseRbacRecord({
      last_update: 1,
      permissions: { good: ['a:get', 7, '', null, 'b:post'], bad: 'a:get', worse: { a: 1 } },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.record.permissions).toEqual({ good: ['a:get', 'b:post'] });
    expect(result.warnings).toHaveLength(5);
  });

  it.each([
    [undefined, /missing/],
    [null, /missing/],
    ['{not json', /not valid JSON/],
    ['[]', /not an object/],
    [42, /not an object/],
    [{ permissions: {} }, /last_update/],
    [{ last_update: 'now', permissions: {} }, /last_update/],
    [{ last_update: 1 }, /no permissions object/],
    [{ last_update: 1, permissions: [] }, /no permissions object/],
  ])('reports %p as unavailable', (input, reason) => {
    const result = parseRbacRecord(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it('does not let a role named __proto__ change the prototype', () => {
    const result = parseRbacRecord('{"last_update":1,"permissions":{"__proto__":["*:*"]}}');
    expect(result.ok && Object.keys(result.record.permissions)).toEqual(['__proto__']);
    expect(result.ok && result.record.permissions['__proto__']).toEqual(['*:*']);
  });

  it('serializes back to the stored shape', () => {
    const result = parseRbacRecord({ last_update: 5, permissions: { r: ['x:get'] } });
    expect(result.ok && serializeRbacRecord(result.record)).toEqual({ last_update: 5, permissions: { r: ['x:get'] } });
  });
});
