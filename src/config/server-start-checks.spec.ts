import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveAuthOptions } from '../auth/auth.options';
import { ConfigError } from './config.error';
import { loadConfig } from './config.loader';
import { checkSearchTools, checkServerStart, checkServerStores } from './server-start-checks';

const STRONG_SECRET = 'k'.repeat(40);

describe('checkServerStart', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-start-checks-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The problems checkServerStart reports for a file (or none) loaded with this environment. */
  async function startProblems(yaml: string | undefined, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
    if (yaml !== undefined) writeFileSync(join(dir, 'tollgate.yaml'), yaml);
    const config = loadConfig({ cwd: dir, env, configPath: yaml === undefined ? undefined : 'tollgate.yaml' });
    try {
      await checkServerStart(config, env);
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  }

  it('passes the defaults, and a file whose auth and providers start', async () => {
    expect(await startProblems(undefined)).toEqual([]);
    const yaml = `version: 1\nauth:\n  jwt_secret: ${STRONG_SECRET}\nproviders:\n  anthropic: { api_key: k }\n  ollama: {}\n`;
    expect(await startProblems(yaml)).toEqual([]);
  });

  it('a loopback SEARXNG_URL fails only what uses search, naming the variable that allows it', async () => {
    const env = { SEARXNG_URL: 'http://127.0.0.1:8888' };
    // Loading (what `tollgate vector install` and `tollgate providers` do) does not look at the tool's address.
    const config = loadConfig({ cwd: dir, env });
    await expect(checkSearchTools(config)).rejects.toThrow(
      'configuration: tools.web_search.url: points at a loopback, private or link-local address; set allow_private_network: true ' +
        'for a tool you run yourself (SEARXNG_ALLOW_PRIVATE_NETWORK=true for the one SEARXNG_URL registers)',
    );
    expect(await startProblems(undefined, env)).toEqual([
      expect.stringMatching(/^configuration: tools\.web_search\.url: points at a loopback.*SEARXNG_ALLOW_PRIVATE_NETWORK=true/),
    ]);
    await expect(checkSearchTools(loadConfig({ cwd: dir, env: { ...env, SEARXNG_ALLOW_PRIVATE_NETWORK: 'true' } }))).resolves.toBeUndefined();
  });

  it('refuses a short HS secret as AuthModule does, naming the YAML keys and never the secret', async () => {
    const problems = await startProblems('version: 1\nauth:\n  jwt_secret: abcde\n');
    expect(problems).toEqual([
      'tollgate.yaml: auth.jwt_secret: is 5 bytes; HS256 needs at least 32 (or set auth.allow_weak_secret: true)',
    ]);
    expect(() => resolveAuthOptions({ jwtSecret: 'abcde' })).toThrow('jwtSecret is 5 bytes');
    expect(await startProblems('version: 1\nauth:\n  jwt_secret: abcde\n  allow_weak_secret: true\n')).toEqual([]);
  });

  it('names JWT_SECRET as the source when the variable set the secret', async () => {
    expect(await startProblems(undefined, { JWT_SECRET: 'abcde' })).toEqual([
      'JWT_SECRET: auth.jwt_secret: is 5 bytes; HS256 needs at least 32 (or set auth.allow_weak_secret: true)',
    ]);
  });

  it('reports every AuthModule refusal at once with its key: list indexes and store options included', async () => {
    const yaml = [
      'version: 1',
      'auth:',
      '  jwt_algorithm: RS256',
      '  jwt_public_key: not a pem',
      '  pathname_slug_pattern: "^/api/"',
      '  skip_paths: [nope]',
      '  rbac_cache_store: redis',
      '  rbac_cache_store_options: { url: "http://127.0.0.1:6379" }',
      '',
    ].join('\n');
    expect(await startProblems(yaml)).toEqual([
      'tollgate.yaml: auth.jwt_public_key: must be a PEM public key for RS256',
      'tollgate.yaml: auth.pathname_slug_pattern: needs a capture group: the first group is the slug',
      'tollgate.yaml: auth.skip_paths[0]: must start with "/" (or be written %r{...})',
      'tollgate.yaml: auth.rbac_cache_store_options.url: must use redis: or rediss: (e.g. redis://127.0.0.1:6379)',
    ]);
  });

  it('still asks for a verification key when auth is configured without one', async () => {
    expect(await startProblems('version: 1\nauth:\n  validate_subdomain: true\n')).toEqual([
      'tollgate.yaml: auth.jwt_secret: is required (set auth.jwt_secret, auth.jwt_secret_env or the JWT_SECRET environment variable)',
    ]);
  });

  it('refuses a provider its adapter would refuse at start, naming the provider', async () => {
    expect(await startProblems('version: 1\nproviders:\n  gemini: {}\n  anthropic: {}\n')).toEqual([
      'tollgate.yaml: providers.gemini: an api_key is required for gemini',
      'tollgate.yaml: providers.anthropic: an api_key is required for anthropic',
    ]);
  });
});

/** Against the real PostgreSQL of the test services (127.0.0.1:5432, database test, trust authentication). */
describe('checkServerStores', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-start-stores-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function storeProblems(ledgerUrl: string): Promise<string[]> {
    writeFileSync(join(dir, 'tollgate.yaml'), `version: 1\ngovernance:\n  ledger: { store: postgres, url: "${ledgerUrl}" }\n`);
    try {
      await checkServerStores(loadConfig({ cwd: dir, env: {}, configPath: 'tollgate.yaml' }));
      return [];
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
  }

  it('refuses a ledger database that does not exist, naming it and its server without the password', async () => {
    const database = `tollgate_missing_${process.pid}`;
    expect(await storeProblems(`postgres://postgres:s3cret-pw@127.0.0.1:5432/${database}?sslmode=disable&password=s3cret-pw`)).toEqual([
      `tollgate.yaml: governance.ledger.url: database "${database}" does not exist on postgres://postgres:***@127.0.0.1:5432; create it or name an existing one`,
    ]);
  });

  it('refuses a response store database that does not exist, naming ai.responses.url', async () => {
    const database = `tollgate_missing_responses_${process.pid}`;
    writeFileSync(join(dir, 'tollgate.yaml'), `version: 1\nai:\n  responses: { store: postgres, url: "postgres://postgres@127.0.0.1:5432/${database}" }\n`);
    await expect(checkServerStores(loadConfig({ cwd: dir, env: {}, configPath: 'tollgate.yaml' }))).rejects.toMatchObject({
      problems: [`tollgate.yaml: ai.responses.url: database "${database}" does not exist on postgres://postgres@127.0.0.1:5432; create it or name an existing one`],
    });
  });

  it('passes a database that exists, and leaves a server that does not answer to the writes\' retries', async () => {
    expect(await storeProblems('postgres://postgres@127.0.0.1:5432/test')).toEqual([]);
    expect(await storeProblems('postgres://postgres@127.0.0.1:1/test')).toEqual([]);
  });
});
