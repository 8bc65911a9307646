import { MAX_REGEX_PERMISSIONS } from '../auth/rbac/permission-matcher';
import { parseRbacRecordFile } from './rbac-record-file';

const NOW = 1_700_000_000;

describe('parseRbacRecordFile', () => {
  it('accepts a well-formed record and keeps its last_update', () => {
    const text = JSON.stringify({
      last_update: 1_690_000_000,
      permissions: { '1': ['sales/invoices:get', 'reports:*'], admin: ['*:*', '%r{^orders/\\d+$}:put'] },
    });
    expect(parseRbacRecordFile(text, 'r.json', NOW)).toEqual({
      ok: true,
      record: {
        last_update: 1_690_000_000,
        permissions: { '1': ['sales/invoices:get', 'reports:*'], admin: ['*:*', '%r{^orders/\\d+$}:put'] },
      },
    });
  });

  it('stamps the load time when last_update is absent, so servers drop cached permissions', () => {
    const result = parseRbacRecordFile('{"permissions":{}}', 'r.json', NOW);
    expect(result).toEqual({ ok: true, record: { last_update: NOW, permissions: {} } });
  });

  it('reads a millisecond last_update as seconds', () => {
    const result = parseRbacRecordFile('{"last_update":1690000000123,"permissions":{}}', 'r.json', NOW);
    expect(result.ok && result.record.last_update).toBe(1_690_000_000);
  });

  it('reports invalid JSON with the file name', () => {
    const result = parseRbacRecordFile('{"permissions":', 'r.json', NOW);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems[0]).toMatch(/^r\.json: not valid JSON \(/);
  });

  it('reports every malformed entry with its location', () => {
    const text = JSON.stringify({
      last_update: 'yesterday',
      extra: true,
      permissions: { editor: 'posts:get', viewer: ['posts:get', 42, 'no-method', 'posts:fetch'] },
    });
    const result = parseRbacRecordFile(text, 'r.json', NOW);
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        'r.json: extra: unknown key (expected last_update and permissions)',
        'r.json: last_update: must be epoch seconds (or milliseconds)',
        'r.json: permissions.editor: must be an array of "<resource>:<method>" strings',
      ]),
    );
    expect(problems.filter((problem) => problem.startsWith('r.json: permissions.viewer[1]: '))).toHaveLength(1);
    expect(problems.filter((problem) => problem.startsWith('r.json: permissions.viewer[2]: '))).toHaveLength(1);
    expect(problems.filter((problem) => problem.startsWith('r.json: permissions.viewer[3]: '))).toHaveLength(1);
    expect(problems.some((problem) => problem.startsWith('r.json: permissions.viewer[0]'))).toBe(false);
  });

  it('refuses a regex the linear-time engine cannot run, naming the role, index and permission', () => {
    const text = JSON.stringify({ permissions: { editor: ['docs/*:get', '%r{(docs)/\\1}:get', '%r{(?:.*a.{20})}:put'] } });
    const result = parseRbacRecordFile(text, 'r.json', NOW);
    expect(!result.ok && result.problems).toEqual([
      expect.stringMatching(/^r\.json: permissions\.editor\[1\]: permission "%r\{\(docs\)\/\\\\1\}:get" skipped: regular expression not supported by the linear-time \(RE2\) engine: invalid escape sequence/),
      expect.stringMatching(/^r\.json: permissions\.editor\[2\]: permission "%r\{\(\?:\.\*a\.\{20\}\)\}:put" skipped: regular expression too complex/),
    ]);
  });

  it('refuses a file with more distinct regexes than one record may hold', () => {
    const regexes = Array.from({ length: MAX_REGEX_PERMISSIONS + 1 }, (_, index) => `%r{files/${index}/.*}:get`);
    const result = parseRbacRecordFile(JSON.stringify({ permissions: { reader: regexes } }), 'r.json', NOW);
    expect(!result.ok && result.problems).toEqual([
      `r.json: permissions.reader[${MAX_REGEX_PERMISSIONS}]: permission "%r{files/${MAX_REGEX_PERMISSIONS}/.*}:get" skipped: the record already holds ${MAX_REGEX_PERMISSIONS} distinct regular expressions (accepted or refused), the most one record may hold`,
    ]);
  });

  it('requires a permissions object', () => {
    expect(parseRbacRecordFile('[]', 'r.json', NOW)).toEqual({
      ok: false,
      problems: ['r.json: must be a JSON object {"last_update": ..., "permissions": {...}}'],
    });
    const result = parseRbacRecordFile('{"last_update":1}', 'r.json', NOW);
    expect(!result.ok && result.problems).toEqual([
      'r.json: permissions: must be an object mapping role ids to lists of "<resource>:<method>" strings',
    ]);
  });
});
