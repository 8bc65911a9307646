import { fastestRunMs } from '../../../test/support/timing';
import {
  MAX_REGEX_PATTERN_LENGTH,
  MAX_RECORD_REGEX_PROGRAM_SIZE,
  MAX_REGEX_PERMISSIONS,
  MAX_REGEX_RESOURCE_PATH_LENGTH,
  compilePermission,
  compilePermissions,
  isAuthorized,
  permissionMatches,
  type CompiledPermission,
} from './permission-matcher';

function compile(permission: unknown): { compiled?: CompiledPermission; warnings: string[] } {
  const warnings: string[] = [];
  const compiled = compilePermission(permission, (message) => warnings.push(message));
  return { compiled, warnings };
}

function matches(permission: string, resource: string, method: string): boolean {
  const { compiled } = compile(permission);
  if (!compiled) throw new Error(`did not compile: ${permission}`);
  return permissionMatches(compiled, resource, method);
}

describe('compilePermission', () => {
  it('splits on the LAST colon so a regex may contain colons', () => {
    const { compiled } = compile('%r{^reports/\\d+:summary$}:get');
    expect(compiled).toMatchObject({ kind: 'regex', method: 'get' });
    expect(permissionMatches(compiled!, 'reports/12:summary', 'get')).toBe(true);
  });

  it('reads each resource form', () => {
    expect(compile('*:*').compiled).toEqual({ kind: 'any', method: '*' });
    expect(compile('sales/*:POST').compiled).toEqual({ kind: 'prefix', method: 'post', prefix: 'sales' });
    expect(compile('/sales/invoices/:get').compiled).toEqual({ kind: 'literal', method: 'get', path: 'sales/invoices' });
  });

  it.each([
    [42, /expected a string/],
    ['reports', /no ':<method>' part/],
    ['reports:', /invalid method/],
    ['reports:g3t', /invalid method/],
    ['%r{a:b}', /invalid method/],
    ['%r{(unclosed}:get', /^permission "%r\{\(unclosed\}:get" skipped: regular expression not supported .*missing closing \)/],
    ['%r{(a)\\1}:get', /^permission "%r\{\(a\)\\\\1\}:get" skipped: regular expression not supported by the linear-time \(RE2\) engine/],
    ['%r{files/(?!secret)}:get', /skipped: regular expression not supported by the linear-time \(RE2\) engine/],
    ['%r{(?:.*a.{20})}:get', /skipped: regular expression too complex/],
    ['sales/*/items:get', /only allowed alone or as a trailing/],
    [`%r{${'a'.repeat(MAX_REGEX_PATTERN_LENGTH + 1)}}:get`, /^permission "%r\{a+\}:get" skipped: regular expression longer than 512/],
  ])('skips %p with a warning', (permission, warning) => {
    const { compiled, warnings } = compile(permission);
    expect(compiled).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(warning)]);
  });

  it('accepts a regex of exactly the maximum length', () => {
    expect(compile(`%r{${'a'.repeat(MAX_REGEX_PATTERN_LENGTH)}}:get`).compiled?.kind).toBe('regex');
  });
});

describe('permissionMatches', () => {
  it('compares the method case-insensitively; * is any method', () => {
    expect(matches('reports:GET', 'reports', 'get')).toBe(true);
    expect(matches('reports:get', 'reports', 'post')).toBe(false);
    expect(matches('reports:*', 'reports', 'delete')).toBe(true);
  });

  it('matches a literal exactly, ignoring one trailing slash in the permission', () => {
    expect(matches('sales/invoices:get', 'sales/invoices', 'get')).toBe(true);
    expect(matches('sales/invoices/:get', 'sales/invoices', 'get')).toBe(true);
    expect(matches('sales/invoices:get', 'sales/invoices/1', 'get')).toBe(false);
    expect(matches('sales/invoices:get', 'sales', 'get')).toBe(false);
    expect(matches('Sales/Invoices:get', 'sales/invoices', 'get')).toBe(false);
  });

  it('* alone matches any path, including the empty one', () => {
    expect(matches('*:get', 'a/b/c', 'get')).toBe(true);
    expect(matches('*:get', '', 'get')).toBe(true);
  });

  it('prefix/* matches the prefix and below, at a segment boundary', () => {
    expect(matches('sales/*:*', 'sales', 'get')).toBe(true);
    expect(matches('sales/*:*', 'sales/invoices/1', 'put')).toBe(true);
    expect(matches('sales/*:*', 'salesforce', 'get')).toBe(false);
    expect(matches('sales/*:*', 'other/sales', 'get')).toBe(false);
  });

  it('anchors a regex to the whole resource path', () => {
    expect(matches('%r{invoices/\\d+}:get', 'invoices/12', 'get')).toBe(true);
    expect(matches('%r{invoices/\\d+}:get', 'sales/invoices/12', 'get')).toBe(false);
    expect(matches('%r{invoices/\\d+}:get', 'invoices/12/delete', 'get')).toBe(false);
    expect(matches('%r{a|b}:get', 'ab', 'get')).toBe(false);
    expect(matches('%r{a|b}:get', 'b', 'get')).toBe(true);
  });

  it('evaluates a nested-quantifier regex in linear time: a hostile path cannot stall the process', () => {
    const { compiled } = compile('%r{files/(a+)+}:get');
    // 27 a's and a mismatch: ~0.6 s for a backtracking engine, doubling per extra 'a' (so the short path goes first).
    for (const path of [`files/${'a'.repeat(27)}!`, `files/${'a'.repeat(16_384)}!`]) {
      expect(permissionMatches(compiled!, path, 'get')).toBe(false);
      expect(fastestRunMs(() => permissionMatches(compiled!, path, 'get'))).toBeLessThan(50);
    }
    expect(permissionMatches(compiled!, 'files/aaa', 'get')).toBe(true);
  });
});

describe('compilePermissions / isAuthorized', () => {
  const warnings: string[] = [];
  const compiled = compilePermissions(
    { '1': ['reports:*', 42 as unknown as string, 'broken'], admin: ['*:*'], '3': [] },
    (message) => warnings.push(message),
  );

  it('keeps the valid entries of each role and names the role in warnings', () => {
    expect(compiled.get('1')).toHaveLength(1);
    expect(warnings).toEqual([expect.stringContaining('role "1"'), expect.stringContaining('role "1"')]);
  });

  it('grants when any role matches', () => {
    expect(isAuthorized(compiled, ['3', '1'], 'reports', 'GET')).toBe(true);
    expect(isAuthorized(compiled, ['admin'], 'anything/at/all', 'patch')).toBe(true);
  });

  it('skips a regex the linear-time engine cannot run, naming role and permission, and keeps the rest', () => {
    const messages: string[] = [];
    const record = compilePermissions({ editor: ['%r{(docs)/\\1}:get', 'docs/*:get'] }, (message) => messages.push(message));
    expect(messages).toEqual([expect.stringMatching(/^role "editor": permission "%r\{\(docs\)\/\\\\1\}:get" skipped: regular expression not supported/)]);
    expect(isAuthorized(record, ['editor'], 'docs/a', 'get')).toBe(true);
  });

  it('holds at most MAX_REGEX_PERMISSIONS distinct regexes per record: a source repeated across roles counts once', () => {
    const messages: string[] = [];
    const sources = Array.from({ length: MAX_REGEX_PERMISSIONS + 1 }, (_, index) => `%r{files/${index}/[0-9]+}:get`);
    const record = compilePermissions(
      { first: sources.slice(0, MAX_REGEX_PERMISSIONS), again: [sources[0]], last: [sources[MAX_REGEX_PERMISSIONS], 'docs/*:get'] },
      (message) => messages.push(message),
    );
    expect(messages).toEqual([
      `role "last": permission "%r{files/${MAX_REGEX_PERMISSIONS}/[0-9]+}:get" skipped: the record already holds ${MAX_REGEX_PERMISSIONS} distinct regular expressions (accepted or refused), the most one record may hold`,
    ]);
    expect(isAuthorized(record, ['again'], 'files/0/12', 'get')).toBe(true);
    expect(isAuthorized(record, ['last'], `files/${MAX_REGEX_PERMISSIONS}/12`, 'get')).toBe(false);
    expect(isAuthorized(record, ['last'], 'docs/a', 'get')).toBe(true);
  });

  it('counts refused regexes toward the cap, and says so', () => {
    const messages: string[] = [];
    const refused = Array.from({ length: MAX_REGEX_PERMISSIONS }, (_, index) => `%r{(a)\\1/${index}}:get`);
    compilePermissions({ broken: refused, late: ['%r{files/[0-9]+}:get'] }, (message) => messages.push(message));
    expect(messages.at(-1)).toBe(
      `role "late": permission "%r{files/[0-9]+}:get" skipped: the record already holds ${MAX_REGEX_PERMISSIONS} distinct regular expressions (accepted or refused), the most one record may hold`,
    );
  });

  it('bounds the program size of all of a record\'s regexes together, and names that bound', () => {
    const messages: string[] = [];
    // Each pattern expands to 900 instructions, under the bound of one pattern.
    const large = Array.from({ length: 5 }, (_, index) => `%r{f${index}[a-z]{899}}:get`);
    const record = compilePermissions({ big: large }, (message) => messages.push(message));
    expect(messages).toEqual([
      `role "big": permission "${large[4]}" skipped: the record's regular expressions would expand past ${MAX_RECORD_REGEX_PROGRAM_SIZE} instructions together, the most one record may hold`,
    ]);
    expect(isAuthorized(record, ['big'], `f3${'a'.repeat(899)}`, 'get')).toBe(true);
  });

  it('loads a record of the most expensive patterns it accepts in a bounded time', () => {
    const hostile = Array.from({ length: MAX_REGEX_PERMISSIONS }, (_, index) => `%r{${index}${'\\p{L}{1000}'.repeat(46)}}:get`);
    const started = performance.now();
    const messages: string[] = [];
    compilePermissions({ hostile }, (message) => messages.push(message));
    // RE2 compiled each before refusing it: ~0.6 s apiece, ~20 s for the record.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(messages).toHaveLength(MAX_REGEX_PERMISSIONS);
    expect(messages[0]).toMatch(/skipped: regular expression too large: its counted repeats expand past 1000 instructions$/);
  });

  it('matches literal and prefix permissions holding spaces or non-ASCII characters against the escaped path', () => {
    const record = compilePermissions({ reader: ['docs/my file:get', 'café/*:get', 'caf%c3%a9/menu%7e:put'] }, () => undefined);
    expect(isAuthorized(record, ['reader'], 'docs/my%20file', 'get')).toBe(true);
    expect(isAuthorized(record, ['reader'], 'caf%C3%A9/x', 'get')).toBe(true);
    expect(isAuthorized(record, ['reader'], 'caf%C3%A9/menu~', 'put')).toBe(true);
    expect(isAuthorized(record, ['reader'], 'docs/my file', 'get')).toBe(false);
  });

  it(`matches no regex permission on a resource path longer than ${MAX_REGEX_RESOURCE_PATH_LENGTH} characters`, () => {
    const record = compilePermissions({ reader: ['%r{files/.*}:get', 'plain/*:get'] }, () => undefined);
    const within = `files/${'a'.repeat(MAX_REGEX_RESOURCE_PATH_LENGTH - 6)}`;
    expect(isAuthorized(record, ['reader'], within, 'get')).toBe(true);
    expect(isAuthorized(record, ['reader'], `${within}a`, 'get')).toBe(false);
    expect(isAuthorized(record, ['reader'], `plain/${'a'.repeat(MAX_REGEX_RESOURCE_PATH_LENGTH)}`, 'get')).toBe(true);
  });

  it('denies a request no permission grants within a bounded time, whatever its path, with the most regexes a record holds', () => {
    const sources = [
      'files/(a+)+',
      '(?:.*a.{6})',
      '(?:a|b|ab|ba)*c',
      '(?:[ab]*/)*[ab]*\\.pdf',
      '[a-z/]*x[a-z/]*y',
      'files/[^/]+/[0-9]+',
    ];
    const permissions = Array.from({ length: MAX_REGEX_PERMISSIONS }, (_, index) => `%r{a{0,${index + 1}}${sources[index % sources.length]}}:get`);
    const record = compilePermissions({ reader: permissions }, (message) => {
      throw new Error(message);
    });
    const paths = [`files/${'a'.repeat(MAX_REGEX_RESOURCE_PATH_LENGTH - 7)}!`, 'ab/'.repeat(682), `${'a'.repeat(16_384)}!`];
    const slowest = Math.max(...paths.map((path) => fastestRunMs(() => isAuthorized(record, ['reader'], path, 'get'))));
    // ~0.8 ms measured for 'ab/' at the length bound; a 16 KiB path cost eight times that before the bound.
    expect(slowest).toBeLessThan(10);
  });

  it('denies unknown roles, no roles and unmatched paths', () => {
    expect(isAuthorized(compiled, ['9'], 'reports', 'get')).toBe(false);
    expect(isAuthorized(compiled, [], 'reports', 'get')).toBe(false);
    expect(isAuthorized(compiled, ['1', '3'], 'sales', 'get')).toBe(false);
  });
});
