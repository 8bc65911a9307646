import { fastestRunMs } from '../../test/support/timing';
import { exceededJsonBound, MAX_JSON_DEPTH } from './json-body-parser';

const bytes = (text: string) => Buffer.from(text);
const exceedsJsonDepth = (body: Uint8Array, maxDepth: number) => exceededJsonBound(body, maxDepth, Infinity) === 'depth';
const nested = (levels: number, inner = '') => '['.repeat(levels) + inner + ']'.repeat(levels);

/** Nesting depth of a parsed value, the reference the scan must agree with (recursion is fine at test sizes). */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Object.values(value as object);
  return 1 + children.reduce<number>((deepest, child) => Math.max(deepest, depthOf(child)), 0);
}

/** Strings that could fool a bracket counter: brackets, quotes and backslashes inside, escapes on both sides of the short-string boundary. */
const TRICKY_STRINGS = [
  '', '[', ']', '{{{', '"', '\\', '\\\\', '\\"', '"[', '\\[', 'é[ü]{ö}', '日本[語]', '\u0000\u001f',
  `${'x'.repeat(31)}"[[`, `${'x'.repeat(30)}\\"`, `${'x'.repeat(33)}\\\\"]]`, `${'y'.repeat(200)}\\"[{${'z'.repeat(50)}\\\\`,
];

/** A deterministic pseudo-random JSON value mixing the tricky strings with arrays and objects. */
function generate(seed: number, budget: number): unknown {
  let state = seed;
  const next = (range: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % range;
  };
  const build = (room: number): unknown => {
    const pick = next(room > 0 ? 5 : 2);
    if (pick === 0) return TRICKY_STRINGS[next(TRICKY_STRINGS.length)];
    if (pick === 1) return next(3) === 0 ? null : next(1000);
    const size = next(4);
    if (pick === 2) return Array.from({ length: size }, () => build(room - 1));
    return Object.fromEntries(Array.from({ length: size }, (_, i) => [`${TRICKY_STRINGS[next(TRICKY_STRINGS.length)]}${i}`, build(room - 1)]));
  };
  return build(budget);
}

/** Values of a parsed JSON value as the scan counts them: every array, object, scalar and object member once. */
function valuesOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1;
  return 1 + Object.values(value as object).reduce<number>((sum, child) => sum + valuesOf(child), 0);
}

describe('exceededJsonBound: depth', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1} and 20,000`, () => {
    expect(exceedsJsonDepth(bytes(nested(MAX_JSON_DEPTH)), MAX_JSON_DEPTH)).toBe(false);
    expect(exceedsJsonDepth(bytes(nested(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH)).toBe(true);
    expect(exceedsJsonDepth(bytes(`{"prompt":"hi","context":${nested(20_000)}}`), MAX_JSON_DEPTH)).toBe(true);
  });

  it('counts objects and arrays alike', () => {
    const objects = '{"a":'.repeat(MAX_JSON_DEPTH) + '1' + '}'.repeat(MAX_JSON_DEPTH);
    expect(exceedsJsonDepth(bytes(objects), MAX_JSON_DEPTH)).toBe(false);
    expect(exceedsJsonDepth(bytes(`[${objects}]`), MAX_JSON_DEPTH)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth(bytes(JSON.stringify({ a: '['.repeat(1000) })), 1)).toBe(false);
    expect(exceedsJsonDepth(bytes(JSON.stringify(['"' + '['.repeat(1000)])), 1)).toBe(false);
    expect(exceedsJsonDepth(bytes(JSON.stringify([`${'x'.repeat(100)}"${'{'.repeat(100)}`])), 1)).toBe(false);
    // An even run of backslashes does not escape the quote: the brackets after it are structure.
    expect(exceedsJsonDepth(bytes(`["\\\\",${nested(3)}]`), 3)).toBe(true);
    expect(exceedsJsonDepth(bytes(`["${'x'.repeat(40)}\\\\\\\\",${nested(3)}]`), 3)).toBe(true);
  });

  it('agrees with the parsed depth on generated values', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const value = generate(seed, 8);
      const text = JSON.stringify(value);
      const depth = depthOf(value);
      expect([seed, exceedsJsonDepth(bytes(text), depth)]).toEqual([seed, false]);
      if (depth > 0) expect([seed, exceedsJsonDepth(bytes(text), depth - 1)]).toEqual([seed, true]);
    }
  });

  it('reads UTF-8 bytes: multi-byte characters never look like brackets or quotes', () => {
    const text = JSON.stringify({ 'ключ': ['日本語', 'emoji 😀 "[', { 'ü': 'ö' }] });
    expect(exceedsJsonDepth(bytes(text), 3)).toBe(false);
    expect(exceedsJsonDepth(bytes(text), 2)).toBe(true);
  });

  it('leaves invalid JSON to the parser: an unterminated string or stray closers are not "too deep"', () => {
    expect(exceedsJsonDepth(bytes('["abc'), 1)).toBe(false);
    expect(exceedsJsonDepth(bytes(']]]]'), 1)).toBe(false);
  });

  it('scans a 1 MiB body of any shape in linear time', () => {
    const MiB = 1024 * 1024;
    const shapes = [
      '['.repeat(MiB),
      `["${'\\'.repeat(MiB - 4)}"]`,
      `["${'\\"'.repeat(MiB / 2 - 2)}"]`,
      `[${'"",'.repeat(MiB / 3 - 1)}""]`,
      `["${'x'.repeat(MiB - 4)}"]`,
    ];
    for (const shape of shapes) {
      const body = bytes(shape);
      // About 1 ms on an idle machine and up to ~0.2 s on two cores shared with other test runs; a quadratic
      // scan would take minutes, so the bound sits far from both.
      expect(fastestRunMs(() => exceedsJsonDepth(body, MAX_JSON_DEPTH))).toBeLessThan(2_000);
    }
  });
});

describe('exceededJsonBound: values', () => {
  it('refuses 20 MiB of empty objects and allows a 20 MiB base64 image', () => {
    const MiB = 1024 * 1024;
    const objects = bytes(`[${'{},'.repeat((20 * MiB) / 3 - 1)}{}]`);
    expect(exceededJsonBound(objects, MAX_JSON_DEPTH, 250_000)).toBe('values');
    const image = JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(20 * MiB - 200)}` } }] }] });
    expect(exceededJsonBound(bytes(image), MAX_JSON_DEPTH, 20)).toBeUndefined();
  });

  it('counts commas and brackets outside strings only, never fewer than the parsed values', () => {
    expect(exceededJsonBound(bytes('[1,2,3]'), MAX_JSON_DEPTH, 4)).toBeUndefined();
    expect(exceededJsonBound(bytes('[1,2,3]'), MAX_JSON_DEPTH, 3)).toBe('values');
    expect(exceededJsonBound(bytes(JSON.stringify([',,,,[{', '\\",,'])), MAX_JSON_DEPTH, 3)).toBeUndefined();
    for (let seed = 1; seed <= 400; seed++) {
      const value = generate(seed, 8);
      const values = valuesOf(value);
      if (values > 1) expect([seed, exceededJsonBound(bytes(JSON.stringify(value)), MAX_JSON_DEPTH, values - 1)]).toEqual([seed, 'values']);
    }
  });

  it('counts exactly for containers that are not empty', () => {
    const value = { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text: 'x' }] }], n: [1, true, null] };
    const text = bytes(JSON.stringify(value));
    expect(exceededJsonBound(text, MAX_JSON_DEPTH, valuesOf(value))).toBeUndefined();
    expect(exceededJsonBound(text, MAX_JSON_DEPTH, valuesOf(value) - 1)).toBe('values');
  });
});
