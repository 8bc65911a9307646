/**
 * `tollgate keys` as its own process against the real PostgreSQL (database `test`), in a table of this run:
 * the key printed once authenticates through the store the CLI wrote, and every bad input is a usage error
 * (exit 2) naming its option. (The Redis store is exercised by the server suite, governance-keys.e2e-spec.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { ApiKeyAuthenticator } from '../src/governance/keys/api-key-authenticator';
import { createKeyStore } from '../src/governance/keys/key-store.factory';
import { buildDistIfStale, runCli } from './support/cli-run';

const POSTGRES_URL = process.env.TOLLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${process.pid}_${Date.now().toString(36)}`;
const TABLE = `tollgate_keys_cli_${RUN}`;
/** A CLI run starts Node and Nest: seconds on a loaded machine. */
const CLI_TIMEOUT_MS = 60_000;
jest.setTimeout(8 * CLI_TIMEOUT_MS);

let work: string;
const stores = {
  postgres: { yaml: `governance: { keys: { store: postgres, url: "${POSTGRES_URL}", table: ${TABLE} } }`, settings: { kind: 'postgres' as const, url: POSTGRES_URL, table: TABLE } },
};

beforeAll(() => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-keys-cli-'));
  for (const [name, { yaml }] of Object.entries(stores)) writeFileSync(join(work, `${name}.yaml`), `version: 1\n${yaml}\n`);
  writeFileSync(join(work, 'memory.yaml'), 'version: 1\n');
}, 120_000);

afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  const pool = new Pool({ connectionString: POSTGRES_URL });
  await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await pool.end();
});

const keys = (store: string, ...args: string[]) => runCli(['keys', ...args, '--config', `${store}.yaml`], { cwd: work, timeoutMs: CLI_TIMEOUT_MS });

describe.each(Object.keys(stores) as Array<keyof typeof stores>)('tollgate keys on %s', (store) => {
  it('creates a key printed once, which then authenticates; lists, shows, updates and revokes it', async () => {
    const created = await keys(store, 'create', '--tenant', 't-1', '--sub-tenant', 'north', '--name', 'ci', '--models', 'openai/*,anthropic/claude-*', '--budget-usd', '5', '--period', 'day', '--rpm', '60', '--tpm', '100000', '--expires', '30d');
    expect({ status: created.status, stderr: created.stderr }).toEqual({ status: 0, stderr: expect.stringMatching(/^key [0-9a-f]{12} created for tenant t-1; the key above is shown this once/) });
    const key = created.stdout.trim();
    expect(key).toMatch(/^tg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    const id = key.slice(3, 15);

    const keyStore = createKeyStore(stores[store].settings);
    try {
      const state = await new ApiKeyAuthenticator(keyStore).authenticate(key);
      expect(state.identity).toMatchObject({ tenant: 't-1', subTenant: 'north', keyId: id });
    } finally {
      await keyStore.close();
    }

    const listed = await keys(store, 'list', '--tenant', 't-1');
    expect(listed.status).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+ci\\s+t-1/north\\s+active\\s+openai/\\*,anthropic/claude-\\*\\s+\\$5/day\\s+60\\s+100000`, 'm'));
    expect(listed.stdout).not.toContain(key.slice(16));

    const shown = await keys(store, 'show', id, '--format', 'json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ id, tenant: 't-1', sub_tenant: 'north', budget: { usd: 5, period: 'day' }, status: 'active' });

    const updated = await keys(store, 'update', id, '--clear', 'models,budget', '--rpm', '7', '--format', 'json');
    expect(updated.status).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ id, models: null, budget: null, rpm: 7, tpm: 100000 });

    const revoked = await keys(store, 'revoke', id, '--format', 'json');
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id, status: 'revoked' });
  });

  it('answers bad input with exit 2 naming each option, and an unknown id with exit 1', async () => {
    const bad = await keys(store, 'create', '--budget-usd', '-5', '--period', 'week', '--models', 'openai', '--expires', '30x');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(
      'tollgate: --tenant: is required; --models[0]: "openai" must be provider/model (e.g. openai/* or anthropic/claude-*); --budget-usd: must be a positive amount of dollars (got -5); ' +
        '--period: must be day or month (got "week"); --expires: must be a duration such as 30d, 12h, 90m, 2w or 45s, up to 3650d (got "30x")\n',
    );
    const unknown = await keys(store, 'show', '000000000000');
    expect({ status: unknown.status, stderr: unknown.stderr }).toEqual({ status: 1, stderr: 'tollgate: No API key with id 000000000000.\n' });
    const clear = await keys(store, 'update', '000000000000', '--clear', 'colour');
    expect({ status: clear.status, stderr: clear.stderr }).toEqual({ status: 2, stderr: 'tollgate: --clear takes name, models, budget, rpm, tpm, expires (got "colour")\n' });
  });
});

describe('tollgate keys without a shared store', () => {
  it('refuses the memory store, whose keys would vanish at exit', async () => {
    const refused = await keys('memory', 'list');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('governance.keys.store is memory');
  });

  it('reports an unreachable store with exit 1 and no credentials', async () => {
    writeFileSync(join(work, 'down.yaml'), 'version: 1\ngovernance: { keys: { store: postgres, url: "postgres://user:hunter2@127.0.0.1:1/test" } }\n');
    const down = await keys('down', 'list');
    expect(down.status).toBe(1);
    expect(down.stderr).toMatch(/^tollgate: cannot reach the postgres key store: /);
    expect(down.stderr).not.toContain('hunter2');
  });
});
