/**
 * `tollgate usage` as a subprocess (node dist/src/cli.js) over a PostgreSQL ledger (127.0.0.1:5432,
 * database test) seeded through the store: table, JSON and CSV output, and exit codes naming the flag.
 * Then the AI commands recording their own calls in that ledger, against the OpenAI emulator.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { LedgerEntry } from '../src/governance/ledger/ledger-entry';
import { PostgresLedgerStore } from '../src/governance/ledger/postgres-ledger-store';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { buildDistIfStale, runCli } from './support/cli-run';

const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `ledger_cli_e2e_${process.pid}`;
let work: string;

function entry(overrides: Partial<LedgerEntry>): LedgerEntry {
  return {
    time: Date.now() - 3_600_000,
    requestId: 'r',
    tenant: 't-1',
    subTenant: null,
    subject: 'u-1',
    keyId: null,
    route: '/v1/generate',
    provider: 'openai',
    model: 'gpt-4o',
    operation: 'generate',
    inputTokens: 1000,
    outputTokens: 100,
    cachedTokens: 0,
    costMicros: 3500,
    status: 'ok',
    estimated: false,
    ...overrides,
  };
}

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-ledger-cli-'));
  writeFileSync(join(work, 'postgres.yaml'), `version: 1\ngovernance:\n  ledger: { store: postgres, url: "${PG_URL}", table: ${TABLE} }\n`);
  writeFileSync(join(work, 'memory.yaml'), 'version: 1\n');
  writeFileSync(join(work, 'commands.yaml'), `version: 1\ngovernance:\n  ledger: { store: postgres, url: "${PG_URL}", table: ${TABLE}_commands }\n`);
  const store = new PostgresLedgerStore({ url: PG_URL, table: TABLE, retentionDays: 31 });
  await store.write([
    entry({}),
    entry({ tenant: 't-2' }),
    entry({ model: 'local-llama', costMicros: null, estimated: true }),
    entry({ time: Date.now() - 10 * 86_400_000 }),
  ]);
  await store.close();
}, 180_000);

afterAll(async () => {
  const sql = new Client({ connectionString: PG_URL });
  await sql.connect();
  await sql.query(`DROP TABLE IF EXISTS ${TABLE}, ${TABLE}_daily, ${TABLE}_commands, ${TABLE}_commands_daily`);
  await sql.end();
  rmSync(work, { recursive: true, force: true });
});

const usage = (args: string[], config = 'postgres.yaml') => runCli(['--config', config, 'usage', ...args], { cwd: work, timeoutMs: 60_000 });
/** Each CLI start takes seconds on a loaded two-core machine; a test runs up to four. */
const SLOW = 240_000;

describe('tollgate usage', () => {
  it('prints the last seven days by model as a table, cost unknown counted apart', async () => {
    const run = await usage(['--since', '7d', '--group-by', 'model']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')).toEqual([
      'model               calls  input_tokens  output_tokens  cached_tokens  cost_usd  unpriced_calls  estimated_calls',
      'openai/gpt-4o           2          2000            200              0     0.007               0                0',
      'openai/local-llama      1          1000            100              0      0.00               1                1',
      '',
    ]);
  }, SLOW);

  it('writes JSON and CSV, filtered to one tenant', async () => {
    const json = await usage(['--group-by', 'tenant', '--tenant', 't-2', '--format', 'json']);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      group_by: 'tenant',
      tenant: 't-2',
      rows: [{ group: 't-2', calls: 1, input_tokens: 1000, output_tokens: 100, cost_usd: 0.0035 }],
    });
    const csv = await usage(['--since', '30d', '--group-by', 'tenant', '--format', 'csv']);
    expect(csv.stdout.split('\r\n')).toEqual([
      'tenant,calls,input_tokens,output_tokens,cached_tokens,cost_usd,unpriced_calls,estimated_calls',
      't-1,3,3000,300,0,0.007,1,1',
      't-2,1,1000,100,0,0.0035,0,0',
      '',
    ]);
  }, SLOW);

  it('names the bad flag (exit 2) and refuses the in-process memory ledger (exit 1)', async () => {
    const group = await usage(['--group-by', 'week']);
    expect(group.status).toBe(2);
    expect(group.stderr).toBe('tollgate: --group-by must be one of tenant, sub_tenant, subject, key, provider, model, day\n');
    const since = await usage(['--since', 'a week']);
    expect(since.status).toBe(2);
    expect(since.stderr).toBe('tollgate: --since must be a duration like 7d, 12h or 30m\n');
    const format = await usage(['--format', 'xml']);
    expect(format.status).toBe(2);
    expect(format.stderr).toContain('--format must be one of table, json, csv');
    const memory = await usage([], 'memory.yaml');
    expect(memory.status).toBe(1);
    expect(memory.stderr).toContain('governance.ledger.store is memory');
  }, SLOW);
});

describe('the AI commands with a PostgreSQL ledger', () => {
  it('record each model call they make for the local account, with the figures the upstream reported', async () => {
    const key = 'sk-ledger-cli-KEY';
    const openai = await OpenAiEmulator.start({ apiKey: key });
    const sql = new Client({ connectionString: PG_URL });
    try {
      const env = { OPENAI_API_KEY: key, OPENAI_URL: openai.url, OPENAI_CHAT_MODEL: 'gpt-test', OPENAI_EMBEDDING_MODEL: 'embed-test' };
      const generate = await runCli(['--config', 'commands.yaml', 'generate', 'Say hello', '--format', 'json'], { cwd: work, env, timeoutMs: 60_000 });
      expect(generate.stderr).toBe('');
      expect(generate.status).toBe(0);
      const embed = await runCli(['--config', 'commands.yaml', 'embed', 'Say hello'], { cwd: work, env, timeoutMs: 60_000 });
      expect(embed.status).toBe(0);
      await sql.connect();
      const { rows } = await sql.query(
        `SELECT tenant, subject, route, provider, model, operation, input_tokens::int, output_tokens::int, status, estimated FROM ${TABLE}_commands ORDER BY id`,
      );
      const local = { tenant: null, subject: `local:${userInfo().username}`, provider: 'openai', status: 'ok', estimated: false };
      // The emulator reports 7 prompt and 3 completion tokens for a chat, and one prompt token per embedded text.
      expect(rows).toEqual([
        { ...local, route: 'tollgate generate', model: 'gpt-test', operation: expect.stringMatching(/^(generate|stream)$/), input_tokens: 7, output_tokens: 3 },
        { ...local, route: 'tollgate embed', model: 'embed-test', operation: 'embed', input_tokens: 1, output_tokens: 0 },
      ]);
    } finally {
      await sql.end();
      await openai.close();
    }
  }, SLOW);
});
