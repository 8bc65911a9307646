import { isObject, numberOrUndefined } from './json-values';

describe('isObject', () => {
  it('accepts plain objects only', () => {
    expect(isObject({})).toBe(true);
    expect(isObject({ a: 1 })).toBe(true);
    for (const value of [null, undefined, [], [1], 'text', 3, true]) expect(isObject(value)).toBe(false);
  });
});

describe('numberOrUndefined', () => {
  it('keeps finite numbers and drops everything else', () => {
    expect(numberOrUndefined(0)).toBe(0);
    expect(numberOrUndefined(-2.5)).toBe(-2.5);
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, '3', null, undefined]) expect(numberOrUndefined(value)).toBeUndefined();
  });
});
