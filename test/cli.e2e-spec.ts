/**
 * The real CLI as a subprocess (node dist/src/cli.js): output, exit codes, and the RBAC commands
 * against the Redis server on 127.0.0.1:6379.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDistIfStale, CLI, ROOT } from './support/cli-run';
import { ServerProcesses } from './support/server-process';

const BIN = join(ROOT, 'bin', 'tollgate');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  raw: Buffer;
}

let work: string;

/** Runs the CLI in a scratch directory (so no developer config/tollgate.yaml is picked up). */
function tollgate(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: work,
    env: { PATH: process.env.PATH, ...env },
    timeout: 20_000,
  });
  return {
    status: result.status,
    stdout: result.stdout.toString('utf8'),
    stderr: result.stderr.toString('utf8'),
    raw: result.stdout,
  };
}

function write(name: string, text: string): string {
  const path = join(work, name);
  writeFileSync(path, text);
  return path;
}

beforeAll(() => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('tollgate --help and usage errors', () => {
  it('prints help listing the commands, exit 0', () => {
    const run = tollgate(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: tollgate [options] [command]');
    for (const command of ['secret', 'rbac', 'config']) expect(run.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    expect(run.stdout).toContain('--config <path>');
  });

  it('works through bin/tollgate too', () => {
    const run = spawnSync(BIN, ['--version'], { cwd: work });
    expect(run.status).toBe(0);
    expect(run.stdout.toString().trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    [['secret', '--help'], ['--format <format>', '--env', '--count <n>', '--quiet', '--length <bytes>']],
    [['rbac', 'load', '--help'], ['Usage: tollgate rbac load [options] <file>']],
    [['config', '--help'], ['validate', 'example']],
  ])('%j prints that command\'s help, exit 0', (args, expected) => {
    const run = tollgate(args);
    expect(run.status).toBe(0);
    for (const text of expected) expect(run.stdout).toContain(text);
  });

  it('unknown command: exit 2, message on stderr', () => {
    const run = tollgate(['frobnicate']);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^tollgate: unknown command 'frobnicate'/);
  });

  it('unknown option: exit 2, message on stderr', () => {
    const run = tollgate(['secret', '--colour']);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^tollgate: unknown option '--colour'/);
  });

  it('no command at all: help on stderr, exit 2', () => {
    const run = tollgate([]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('Usage: tollgate');
  });

  it('surplus arguments are a usage error', () => {
    const run = tollgate(['secret', 'extra']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^tollgate: too many arguments/);
  });

  it('a parent command without its sub-command is a usage error', () => {
    const run = tollgate(['rbac']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('tollgate: rbac: missing subcommand (load, show)');
  });
});

describe('tollgate secret', () => {
  /** The secret lines of a run without --quiet (the header is a `#` comment). */
  const secretsOf = (run: Run) => run.stdout.split('\n').filter((line) => line && !line.startsWith('#'));

  it('defaults to one 64-byte hex secret with a header giving length, format and entropy', () => {
    const run = tollgate(['secret']);
    expect(run.status).toBe(0);
    const [header, secret, ...rest] = run.stdout.split('\n');
    expect(header).toBe('# tollgate: secret of 64 random bytes (512 bits of entropy each), hex format, from crypto.randomBytes');
    expect(secret).toMatch(/^[0-9a-f]{128}$/);
    expect(rest).toEqual(['']);
    expect(run.stderr).toBe('');
  });

  it('--quiet prints only the secret', () => {
    const run = tollgate(['secret', '--quiet']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^[0-9a-f]{128}\n$/);
  });

  it('gives different secrets on every call and within one call', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) for (const secret of secretsOf(tollgate(['secret', '--count', '5']))) seen.add(secret);
    expect(seen.size).toBe(15);
  });

  it('hex secrets look random: every hex digit occurs, none dominates', () => {
    const text = secretsOf(tollgate(['secret', '--quiet', '--count', '20', '--length', '1024'])).join('');
    expect(text).toHaveLength(20 * 2048);
    const counts = new Map<string, number>();
    for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(16);
    const expected = text.length / 16;
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.1);
  });

  it('--format base64 decodes to --length bytes', () => {
    const run = tollgate(['secret', '--format', 'base64', '--length', '48', '--quiet']);
    expect(run.status).toBe(0);
    const secret = run.stdout.trim();
    expect(secret).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(secret, 'base64')).toHaveLength(48);
  });

  it('--format raw writes exactly --length bytes to stdout and its header to stderr', () => {
    const run = tollgate(['secret', '--format', 'raw', '--length', '32']);
    expect(run.status).toBe(0);
    expect(run.raw).toHaveLength(32);
    expect(run.stderr).toContain('32 random bytes (256 bits of entropy each), raw format');
    const quiet = tollgate(['secret', '--format', 'raw', '--quiet']);
    expect(quiet.raw).toHaveLength(64);
    expect(quiet.stderr).toBe('');
    expect(quiet.raw.equals(run.raw.subarray(0, 32))).toBe(false);
  });

  it('--env prints JWT_SECRET= lines, header as a comment so the output is a valid .env file', () => {
    const run = tollgate(['secret', '--env', '--count', '2']);
    expect(run.status).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^# tollgate: 2 secrets of 64 random bytes/);
    for (const line of lines.slice(1)) expect(line).toMatch(/^JWT_SECRET=[0-9a-f]{128}$/);
    expect(tollgate(['secret', '--env', '--quiet']).stdout).toMatch(/^JWT_SECRET=[0-9a-f]{128}\n$/);
  });

  it.each([16, 1024])('--length %i (the bounds) is accepted', (length) => {
    const run = tollgate(['secret', '--quiet', '--length', String(length)]);
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toHaveLength(length * 2);
  });

  it.each([
    [['--length', '15'], '--length must be an integer from 16 to 1024 (got "15")'],
    [['--length', '1025'], '--length must be an integer from 16 to 1024 (got "1025")'],
    [['--length', 'abc'], '--length must be an integer from 16 to 1024 (got "abc")'],
    [['--length', '32.5'], '--length must be an integer from 16 to 1024 (got "32.5")'],
    [['--count', '0'], '--count must be an integer from 1 to 1000 (got "0")'],
    [['--count', 'many'], '--count must be an integer from 1 to 1000 (got "many")'],
    [['--format', 'HEX'], '--format must be one of hex, base64, raw (got "HEX")'],
    [['--format', 'base32'], '--format must be one of hex, base64, raw (got "base32")'],
    [['--format', 'raw', '--env'], '--env cannot be combined with --format raw'],
    [['--format', 'raw', '--count', '2'], '--format raw writes exactly one secret'],
  ])('%j: message on stderr, nothing on stdout, exit 2', (args, message) => {
    const run = tollgate(['secret', ...args]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`tollgate: ${message}`);
  });

  it('an option without its value is a usage error', () => {
    const run = tollgate(['secret', '--length']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^tollgate: option '--length <bytes>' argument missing/);
  });
});

describe('tollgate config', () => {
  it('validate without a file: built-in defaults are valid, exit 0', () => {
    const run = tollgate(['config', 'validate']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('no configuration file (built-in defaults and environment): valid');
  });

  it('validate a good file, given by --config or TOLLGATE_CONFIG', () => {
    const file = write('good.yaml', 'version: 1\nserver:\n  port: 8080\nauth:\n  jwt_secret_env: MY_SECRET\n');
    const env = { MY_SECRET: 'k'.repeat(40) };
    expect(tollgate(['config', 'validate', '--config', file], env).status).toBe(0);
    expect(tollgate(['--config', file, 'config', 'validate'], env).status).toBe(0);
    const run = tollgate(['config', 'validate'], { ...env, TOLLGATE_CONFIG: file });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`${file}: valid`);
  });

  it('validate a bad file: every problem names the file and the key, exit 1', () => {
    const file = write(
      'bad.yaml',
      'version: 1\nserver:\n  port: 99999\nauth:\n  jwt_algorithm: none\n  cached_permissions_ttl: soon\n  skip_path: []\n',
    );
    const run = tollgate(['config', 'validate', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        `tollgate: ${file}: server.port: must be <= 65535`,
        expect.stringMatching(new RegExp(`^tollgate: ${file}: auth\\.jwt_algorithm: must be one of HS256, `)),
        `tollgate: ${file}: auth.cached_permissions_ttl: must be an integer`,
        `tollgate: ${file}: auth.skip_path: unknown key (did you mean skip_paths?)`,
      ]),
    );
  });

  it('validate reports a missing jwt_secret when auth is configured, never a secret value', () => {
    const file = write('nosecret.yaml', 'version: 1\nauth:\n  validate_subdomain: true\n');
    const run = tollgate(['config', 'validate', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`tollgate: ${file}: auth.jwt_secret: is required`);
    const secret = 'sup3r-secret-value-that-must-not-leak';
    const bad = write('badenv.yaml', 'version: 1\nserver:\n  port: ${BAD_PORT}\n');
    const leak = tollgate(['config', 'validate', '--config', bad], { BAD_PORT: secret });
    expect(leak.status).toBe(1);
    expect(leak.stderr).toContain(`${bad}: server.port: must be an integer`);
    expect(leak.stderr + leak.stdout).not.toContain(secret);
  });

  it('validate runs the checks the server runs at start: a short HS secret is refused with the YAML key, never the secret', () => {
    const file = write('weak.yaml', 'version: 1\nauth:\n  jwt_secret: "w3ak!"\n');
    const run = tollgate(['config', 'validate', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`tollgate: ${file}: auth.jwt_secret: is 5 bytes; HS256 needs at least 32 (or set auth.allow_weak_secret: true)\n`);
    const fromEnv = tollgate(['config', 'validate'], { JWT_SECRET: 'w3ak!' });
    expect(fromEnv.status).toBe(1);
    expect(fromEnv.stderr).toBe('tollgate: JWT_SECRET: auth.jwt_secret: is 5 bytes; HS256 needs at least 32 (or set auth.allow_weak_secret: true)\n');
    expect(fromEnv.stderr + run.stderr).not.toContain('w3ak!');
  });

  it('validate refuses a provider the server could not build (gemini without an api_key)', () => {
    const file = write('keyless.yaml', 'version: 1\nproviders:\n  gemini: { chat_model: gemini-2.0-flash }\n');
    const run = tollgate(['config', 'validate', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(`tollgate: ${file}: providers.gemini: an api_key is required for gemini\n`);
  });

  it('validate names a missing file', () => {
    const run = tollgate(['config', 'validate', '--config', 'missing.yaml']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('tollgate: missing.yaml: file not found (named by --config)\n');
  });

  it('example prints the annotated starter with the schema line first, and it validates as printed', () => {
    const run = tollgate(['config', 'example']);
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe('# yaml-language-server: $schema=./tollgate.schema.json');
    const file = write('example.yaml', run.stdout);
    const asPrinted = tollgate(['config', 'validate', '--config', file]);
    expect(asPrinted.stderr).toBe('');
    expect(asPrinted.status).toBe(0);
    expect(tollgate(['config', 'validate', '--config', file], { JWT_SECRET: 'k'.repeat(64) }).status).toBe(0);
  });
});

describe('tollgate rbac (Redis on 127.0.0.1:6379)', () => {
  let config: string;
  let recordKey: string;

  beforeEach(() => {
    recordKey = `cli-e2e-${randomUUID()}`;
    config = write(
      `rbac-${recordKey}.yaml`,
      `version: 1\nauth:\n  rbac_cache_store: redis\n  rbac_cache_store_options: { url: "${REDIS_URL}" }\n  rbac_record_key: ${recordKey}\n`,
    );
  });

  it('show before any load: exit 1 with a message naming the key', () => {
    const run = tollgate(['rbac', 'show', '--config', config]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`tollgate: no RBAC record under key ${recordKey} in the redis store`);
  });

  it('load then show round-trips the record; load stamps last_update when absent', () => {
    const before = Math.floor(Date.now() / 1000);
    const file = write('record.json', JSON.stringify({ permissions: { admin: ['*:*'], '7': ['sales/invoices:get', 'reports:*'] } }));
    const load = tollgate(['rbac', 'load', file, '--config', config]);
    expect(load.stderr).toBe('');
    expect(load.status).toBe(0);
    expect(load.stdout).toContain('loaded 2 role(s) with 3 permission(s) into the redis store');

    const show = tollgate(['rbac', 'show', '--config', config]);
    expect(show.status).toBe(0);
    const record = JSON.parse(show.stdout);
    expect(record.permissions).toEqual({ admin: ['*:*'], '7': ['sales/invoices:get', 'reports:*'] });
    expect(record.last_update).toBeGreaterThanOrEqual(before);
    expect(record.last_update).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('load keeps an explicit last_update and replaces the previous record', () => {
    write('one.json', JSON.stringify({ last_update: 1_700_000_000, permissions: { a: ['x:get'] } }));
    write('two.json', JSON.stringify({ last_update: 1_700_000_100, permissions: { b: ['y:post'] } }));
    expect(tollgate(['rbac', 'load', 'one.json', '--config', config]).status).toBe(0);
    expect(tollgate(['rbac', 'load', 'two.json', '--config', config]).status).toBe(0);
    expect(JSON.parse(tollgate(['rbac', 'show', '--config', config]).stdout)).toEqual({
      last_update: 1_700_000_100,
      permissions: { b: ['y:post'] },
    });
  });

  it('refuses a malformed file, listing every bad entry, and stores nothing', () => {
    const file = write(
      'malformed.json',
      JSON.stringify({ permissions: { admin: '*:*', editor: ['posts:get', 'posts', 'posts:fetch', 7] } }),
    );
    const run = tollgate(['rbac', 'load', file, '--config', config]);
    expect(run.status).toBe(1);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toContain(`tollgate: ${file}: permissions.admin: must be an array of "<resource>:<method>" strings`);
    expect(lines.filter((line) => line.startsWith(`tollgate: ${file}: permissions.editor[`))).toHaveLength(3);
    expect(tollgate(['rbac', 'show', '--config', config]).status).toBe(1);
  });

  it('refuses a file that is not JSON, and a file that does not exist', () => {
    const file = write('broken.json', '{"permissions": {');
    const broken = tollgate(['rbac', 'load', file, '--config', config]);
    expect(broken.status).toBe(1);
    expect(broken.stderr).toMatch(new RegExp(`^tollgate: ${file}: not valid JSON`));
    const missing = tollgate(['rbac', 'load', 'nope.json', '--config', config]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('tollgate: nope.json: cannot read the file (ENOENT)\n');
  });

  it('load without a file argument is a usage error', () => {
    const run = tollgate(['rbac', 'load', '--config', config]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^tollgate: missing required argument 'file'/);
  });

  it('without a shared store configured: refuses, saying a memory record would vanish', () => {
    const file = write('ok.json', '{"permissions":{}}');
    for (const args of [['rbac', 'load', file], ['rbac', 'show']]) {
      const run = tollgate(args);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('tollgate: auth.rbac_cache_store is not set: a record loaded by the CLI would vanish when it exits');
    }
    const memory = write('memory.yaml', 'version: 1\nauth:\n  rbac_cache_store: memory\n');
    const run = tollgate(['rbac', 'show', '--config', memory]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('auth.rbac_cache_store is memory');
  });

  it('an unreachable store: exit 1 quickly, credentials masked', () => {
    const down = write(
      'down.yaml',
      'version: 1\nauth:\n  rbac_cache_store: redis\n  rbac_cache_store_options: { url: "redis://user:hunter2@127.0.0.1:1" }\n',
    );
    const started = Date.now();
    const run = tollgate(['rbac', 'show', '--config', down]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^tollgate: cannot read the redis RBAC store: /);
    expect(run.stderr).not.toContain('hunter2');
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('tollgate serve', () => {
  it('serves the same HTTP app on --port, until SIGTERM', async () => {
    const server = new ServerProcesses().startNode([CLI, 'serve', '--port', '0'], work, { startTimeoutMs: 20_000 });
    const { child } = server;
    const url = await server.url;
    try {
      const response = await fetch(`${url}/healthz`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ok' });
    } finally {
      const ended = new Promise((resolvePromise) => child.once('exit', resolvePromise));
      child.kill('SIGTERM');
      expect(await ended).toBe(0);
    }
    expect(server.output()).toContain('stopped (SIGTERM)');
  });

  it('refuses a configuration the server would refuse before starting it: `file: key: message`, exit 1, no stack trace', () => {
    const file = write('serve-weak.yaml', 'version: 1\nauth:\n  jwt_secret: "w3ak!"\n');
    const run = tollgate(['serve', '--port', '0', '--config', file], { NO_COLOR: '1' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`tollgate: ${file}: auth.jwt_secret: is 5 bytes; HS256 needs at least 32 (or set auth.allow_weak_secret: true)\n`);
  });

  it('a bad --port is a usage error', () => {
    const run = tollgate(['serve', '--port', 'http']);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('tollgate: --port must be an integer from 0 to 65535 (got "http")\n');
  });
});
