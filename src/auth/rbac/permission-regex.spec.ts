import { fastestRunMs } from '../../../test/support/timing';
import { MAX_REGEX_STATES, compilePathRegex } from './permission-regex';

function compiled(source: string) {
  const result = compilePathRegex(source);
  if (!result.ok) throw new Error(`refused ${source}: ${result.reason}`);
  return result.regex;
}

/** Deterministic pseudo-random paths over an alphabet, so a failure reproduces. */
function randomPaths(count: number, length: number, alphabet: string): string[] {
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  return Array.from({ length: count }, () => Array.from({ length }, () => alphabet[next() % alphabet.length]).join(''));
}

describe('compilePathRegex', () => {
  it('matches the whole path, as the JavaScript pattern would', () => {
    const cases: Array<[string, string, boolean]> = [
      ['invoices/\\d+', 'invoices/12', true],
      ['invoices/\\d+', 'sales/invoices/12', false],
      ['invoices/\\d+', 'invoices/12/delete', false],
      ['a|b', 'ab', false],
      ['a|b', 'b', true],
      ['^reports/\\d+:summary$', 'reports/12:summary', true],
      ['files/.*\\.pdf', 'files/a/b.pdf', true],
      ['files/.*\\.pdf', 'files/a/b.pdfx', false],
      ['(?<kind>sales|billing)/\\u0041', 'billing/A', true],
      ['docs/\\bv\\d', 'docs/v2', true],
    ];
    for (const [source, path, expected] of cases) {
      expect([source, path, compiled(source).testExact(path)]).toEqual([source, path, expected]);
      expect(new RegExp(`^(?:${source})$`).test(path)).toBe(expected);
    }
  });

  it.each([
    ['(a)\\1', /not supported by the linear-time \(RE2\) engine: invalid escape sequence: `\\1`/],
    ['(?=a)a', /not supported by the linear-time \(RE2\) engine: .*`\(\?=`/],
    ['(?<!a)b', /not supported by the linear-time \(RE2\) engine/],
    ['(unclosed', /not supported by the linear-time \(RE2\) engine: missing closing \)/],
    ['(?:.*a.{16})', new RegExp(`too complex: its matcher would need more than ${MAX_REGEX_STATES} states`)],
    ['(?:[ab/.]{1,40}){1,10}', /too complex/],
    ['\\p{L}{1001}', /^too large: its counted repeats expand past 1000 instructions$/],
    ['(?:(?:[a-z]{10}){10}){11}', /^too large/],
  ])('refuses %p with the reason', (source, reason) => {
    const result = compilePathRegex(source);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it('builds the whole automaton at load: matching never adds a state', () => {
    for (const source of ['files/.*\\.pdf', '(?:.*a.{5})', 'docs/\\bv\\d.*$', '[a-z/.]*a[a-z/.]*b[a-z/.]*a']) {
      const regex = compiled(source);
      const dfa = regex.re2().dfa;
      const before = dfa.stateCount;
      for (const path of randomPaths(200, 64, 'ab/._-Z9\n\u00e9')) regex.testExact(path);
      expect([source, dfa.stateCount]).toEqual([source, before]);
    }
  });

  it('checks a 16 KiB hostile path quickly for every accepted pattern (typically ~0.2 ms)', () => {
    const patterns = ['files/(a+)+', '(a|a)*b', '(?:.*a.{6})', '(?:a|b|ab|ba)*c', 'files/.*\\.pdf', '(?:[ab]*/)*[ab]*\\.pdf'].map(compiled);
    const paths = [`files/${'a'.repeat(16_384)}!`, ...randomPaths(20, 16_384, 'ab/.')];
    let slowest = 0;
    for (const regex of patterns) {
      for (const path of paths) slowest = Math.max(slowest, fastestRunMs(() => regex.testExact(path)));
    }
    // Typically ~0.2 ms; the backtracking engine took seconds.
    expect(slowest).toBeLessThan(50);
  });
});
