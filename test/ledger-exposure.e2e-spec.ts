/**
 * What the ledger shows, and to whom (issue 27, part 3), on real server processes (node dist/src/main.js) that
 * share API keys in Redis and one PostgreSQL ledger, in front of the OpenAI emulator: /metrics without a token
 * names no tenant, one tenant's junk model names push no other model into `other`, a key restricted to one model
 * lists only that model, embeddings answer the usage the ledger records, usage groups by provider/model,
 * `tollgate usage` prints caller-chosen model names inert, and a ledger database that does not exist stops the
 * start with a line naming it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { buildDistIfStale, runCli } from './support/cli-run';
import { ServerProcesses } from './support/server-process';
import { dropLedgerTables, dropRedisKeys } from './support/store-cleanup';
import { bearerCall as call } from './support/bearer-call';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_TOKEN = 'admin-token-for-ledger-exposure';
const METRICS_TOKEN = 'metrics-token-for-ledger-exposure';
const UPSTREAM_KEY = 'sk-emulator-ledger-exposure';

const run = randomUUID().slice(0, 8);
const keyPrefix = `tollgate:test-ledger-exposure:${run}:`;
const ledgerTable = `ledger_exposure_${run}`;
const servers = new ServerProcesses();
let work: string;
let upstream: OpenAiEmulator;
/** /metrics open to anyone (no metrics.token). */
let open: string;
/** /metrics behind metrics.token. */
let guarded: string;
const keys: Record<'acme' | 'globex' | 'narrow', string> = { acme: '', globex: '', narrow: '' };


const chat = (server: string, key: string, model: string) =>
  call(server, 'POST', '/openai/v1/chat/completions', key, { model, max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] });

/** The value of one exposition line, or undefined when the series is absent. */
function series(exposition: string, name: string): number | undefined {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

const ledgerLines = (exposition: string) => exposition.split('\n').filter((line) => line.startsWith('tollgate_ledger_'));

function configYaml(extra: string[] = [], ledgerUrl = PG_URL): string {
  return [
    'version: 1',
    'api: { token: "api-token-unused-here" }',
    'ai: { retry_attempts: 0, enable_fallback: false, model_aliases: { fast: ["openai/gpt-test"], wide: ["openai/gpt-other"] } }',
    'providers:',
    `  openai: { url: "${upstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, embedding_model: embed-test, models: [gpt-other], timeout: 10 }`,
    'governance:',
    `  keys: { store: redis, url: "${REDIS_URL}", key_prefix: "${keyPrefix}keys:" }`,
    `  admin_token: "${ADMIN_TOKEN}"`,
    `  ledger: { store: postgres, url: "${ledgerUrl}", table: ${ledgerTable}, flush_interval: 0.2 }`,
    ...extra,
    '',
  ].join('\n');
}

function writeConfig(name: string, yaml: string): string {
  const file = join(work, name);
  writeFileSync(file, yaml);
  return file;
}

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-ledger-exposure-'));
  upstream = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY, chatModels: ['gpt-test', 'gpt-other'], embeddingModels: ['embed-test'] });
  const openFile = writeConfig('open.yaml', configYaml());
  const guardedFile = writeConfig('guarded.yaml', configYaml([`metrics: { token: "${METRICS_TOKEN}" }`]));
  [open, guarded] = await Promise.all([servers.start(openFile, work).url, servers.start(guardedFile, work).url]);
  const specs = {
    acme: { tenant: 'acme', name: 'acme' },
    globex: { tenant: 'globex', name: 'globex' },
    narrow: { tenant: 'acme', name: 'narrow', models: ['openai/gpt-test'] },
  };
  for (const [name, spec] of Object.entries(specs)) {
    const created = await call(open, 'POST', '/v1/admin/keys', ADMIN_TOKEN, spec);
    expect(created.status).toBe(201);
    keys[name as keyof typeof keys] = created.body.key as string;
  }
}, 180_000);

afterAll(async () => {
  await servers.stopAll();
  await dropRedisKeys(REDIS_URL, keyPrefix);
  await dropLedgerTables(PG_URL, ledgerTable);
  await upstream?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('/metrics', () => {
  it('without metrics.token sums the ledger over every tenant (tenant="all"); behind the token it shows each tenant', async () => {
    for (const server of [open, guarded]) {
      for (const key of [keys.acme, keys.globex]) expect((await chat(server, key, 'openai/gpt-test')).status).toBe(200);
    }
    const anyone = await call(open, 'GET', '/metrics', '');
    expect(anyone.status).toBe(200);
    expect(series(anyone.text, 'tollgate_ledger_calls_total{tenant="all",provider="openai",model="gpt-test",status="ok"}')).toBe(2);
    expect(series(anyone.text, 'tollgate_ledger_tokens_total{tenant="all",provider="openai",model="gpt-test",type="input"}')).toBe(14);
    expect(ledgerLines(anyone.text).length).toBeGreaterThan(0);
    expect(ledgerLines(anyone.text).filter((line) => !line.includes('tenant="all"'))).toEqual([]);
    expect(anyone.text).not.toMatch(/acme|globex/);

    expect((await call(guarded, 'GET', '/metrics', '')).status).toBe(401);
    const scraper = await call(guarded, 'GET', '/metrics', METRICS_TOKEN);
    expect(series(scraper.text, 'tollgate_ledger_calls_total{tenant="acme",provider="openai",model="gpt-test",status="ok"}')).toBe(1);
    expect(series(scraper.text, 'tollgate_ledger_calls_total{tenant="globex",provider="openai",model="gpt-test",status="ok"}')).toBe(1);
  });

  it("one tenant's junk model names take no label from anyone: later models of other tenants keep their names", async () => {
    for (let i = 0; i < 210; i += 30) {
      const answers = await Promise.all(Array.from({ length: 30 }, (_, j) => chat(guarded, keys.globex, `openai/junk-${i + j}`)));
      for (const answer of answers) expect(answer.status).toBe(404);
    }
    expect((await chat(guarded, keys.acme, 'openai/gpt-other')).status).toBe(200);
    const scraper = await call(guarded, 'GET', '/metrics', METRICS_TOKEN);
    expect(series(scraper.text, 'tollgate_ledger_calls_total{tenant="acme",provider="openai",model="gpt-other",status="ok"}')).toBe(1);
    expect(series(scraper.text, 'tollgate_ledger_calls_total{tenant="globex",provider="openai",model="other",status="error"}')).toBe(210);
    expect(scraper.text).not.toContain('junk-');
  });
});

describe('model listings', () => {
  it('show a key restricted to one model only that model and the aliases that reach it', async () => {
    const listed = await call(open, 'GET', '/openai/v1/models', keys.narrow);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((model: { id: string }) => model.id)).toEqual(['openai/gpt-test', 'fast']);
    const v1 = await call(open, 'GET', '/v1/models', keys.narrow);
    expect(v1.body.models.map((model: { provider: string; id: string }) => `${model.provider}/${model.id}`)).toEqual(['openai/gpt-test']);

    expect((await call(open, 'GET', '/openai/v1/models/gpt-test', keys.narrow)).body).toMatchObject({ id: 'gpt-test', object: 'model' });
    expect((await call(open, 'GET', '/openai/v1/models/fast', keys.narrow)).status).toBe(200);
    for (const id of ['openai/gpt-other', 'gpt-other', 'embed-test', 'wide']) {
      const refused = await call(open, 'GET', `/openai/v1/models/${id}`, keys.narrow);
      expect(refused.status).toBe(404);
      expect(refused.body.error).toMatchObject({ code: 'model_not_found', message: `model '${id}' does not exist or is not allowed for this caller` });
    }
  });

  it('show an unrestricted key the whole catalogue', async () => {
    const listed = await call(open, 'GET', '/openai/v1/models', keys.acme);
    expect(listed.body.data.map((model: { id: string }) => model.id)).toEqual(['openai/gpt-test', 'openai/gpt-other', 'openai/embed-test', 'fast', 'wide']);
    expect((await call(open, 'GET', '/openai/v1/models/wide', keys.acme)).status).toBe(200);
  });
});

describe('embeddings and usage by model', () => {
  it('/openai/v1/embeddings answers the usage the upstream reported, which the ledger holds under openai/embed-test', async () => {
    const embedded = await call(open, 'POST', '/openai/v1/embeddings', keys.globex, { model: 'embed-test', input: ['one', 'two', 'three', 'four'] });
    expect(embedded.status).toBe(200);
    // The emulator reports one prompt token per input.
    expect(embedded.body.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const usage = await call(open, 'GET', '/v1/usage?group_by=model', keys.globex);
    expect(usage.status).toBe(200);
    const groups = usage.body.rows.map((row: { group: string }) => row.group);
    expect(groups).toEqual(expect.arrayContaining(['openai/embed-test', 'openai/gpt-test']));
    expect(groups.filter((group: string) => !group.startsWith('openai/'))).toEqual([]);
    expect(usage.body.rows.find((row: { group: string }) => row.group === 'openai/embed-test')).toMatchObject({ calls: 1, input_tokens: 4 });
  });
});

describe('tollgate usage', () => {
  it('prints model names a caller sent with control characters escaped, and CSV cells that are no formula', async () => {
    const hostile = [
      'openai/\u001b[2J\u001b]8;;https://evil.example\u0007gpt-test\u001b]8;;\u0007',
      'openai/x\nacme         999999',
      'openai/=HYPERLINK("https://evil.example","gpt-test")',
    ];
    for (const model of hostile) expect((await chat(open, keys.globex, model)).status).toBe(404);
    // /v1/usage writes what the process holds first, so the command reads every call.
    expect((await call(open, 'GET', '/v1/usage?group_by=model', keys.globex)).status).toBe(200);
    const cliConfig = writeConfig('cli.yaml', `version: 1\ngovernance:\n  ledger: { store: postgres, url: "${PG_URL}", table: ${ledgerTable} }\n`);
    const usage = (format: string) =>
      runCli(['--config', cliConfig, 'usage', '--since', '1d', '--group-by', 'model', '--tenant', 'globex', '--format', format], { cwd: work, timeoutMs: 60_000 });

    const table = await usage('table');
    expect(table.status).toBe(0);
    expect(table.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(table.stdout).toContain('openai/\\x1b[2J\\x1b]8;;https://evil.example\\x07gpt-test\\x1b]8;;\\x07');
    expect(table.stdout).toContain('openai/x\\x0aacme         999999');
    const tableLines = table.stdout.trimEnd().split('\n');
    expect(tableLines.filter((line) => line.startsWith('acme'))).toEqual([]);

    const csv = await usage('csv');
    expect(csv.status).toBe(0);
    const csvLines = csv.stdout.split('\r\n');
    expect(csvLines.filter((line) => line.startsWith('acme'))).toEqual([]);
    expect(csvLines.some((line) => line.startsWith(`"openai/=HYPERLINK(""https://evil.example"",""gpt-test"")",1,`))).toBe(true);
    expect(csv.stdout).not.toMatch(/[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f]/);
    // Every row is one line: header, the globex models, and the final empty string after the last CRLF.
    expect(csvLines).toHaveLength(tableLines.length + 1);
  }, 180_000);
});

describe('start', () => {
  it('refuses a ledger database that does not exist: exit 1, the database named, the password redacted, no stack trace', async () => {
    const database = `tollgate_missing_${run}`;
    const file = writeConfig('missing-db.yaml', configYaml([], `postgres://postgres:s3cret-ledger-pw@127.0.0.1:5432/${database}`));
    const server = servers.start(file, work);
    const exitCode = new Promise<number | null>((resolve) => server.child.on('exit', resolve));
    await expect(server.url).rejects.toThrow('server exited with 1');
    expect(await exitCode).toBe(1);
    expect(server.output()).toBe(
      `tollgate: ${file}: governance.ledger.url: database "${database}" does not exist on postgres://postgres:***@127.0.0.1:5432; create it or name an existing one\n`,
    );
  }, 60_000);
});
