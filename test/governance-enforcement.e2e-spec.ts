/**
 * Governance on the request path, end to end: two real server processes (node dist/src/main.js) share one
 * Redis (API keys, budget counters) and one PostgreSQL ledger, in front of an OpenAI emulator. A key's budget
 * holds across both processes under concurrent load, a model outside a key's allow-list is refused before any
 * upstream call, and the ledger's token sum is what the emulator reported.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { ServerProcesses } from './support/server-process';
import { dropLedgerTables, dropRedisKeys } from './support/store-cleanup';
import { bearerCall as call } from './support/bearer-call';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_TOKEN = 'admin-token-for-governance-enforcement';
const UPSTREAM_KEY = 'sk-emulator-governance-enforcement';
/** What the OpenAI emulator reports for every chat answer: 7 prompt and 3 completion tokens. */
const TOKENS_PER_CALL = 10;

const run = randomUUID().slice(0, 8);
const keyPrefix = `tollgate:test-governance-enforcement:${run}:`;
const ledgerTable = `ledger_enforcement_${run}`;
let work: string;
let upstream: OpenAiEmulator;
const servers = new ServerProcesses();
let first: string;
let second: string;
let configFile: string;

function startServer(configFile: string): Promise<string> {
  return servers.start(configFile, work).url;
}

/** Polls the shared ledger (through the admin's /v1/usage) until the key shows `calls` calls; answers its row. */
async function ledgerRowOf(keyId: string, tenant: string, calls: number): Promise<Record<string, number>> {
  const deadline = Date.now() + 20_000;
  let row: Record<string, number> = {};
  while (Date.now() < deadline) {
    const usage = await call(first, 'GET', `/v1/usage?group_by=key&tenant=${tenant}`, ADMIN_TOKEN);
    expect(usage.status).toBe(200);
    row = (usage.body.rows as Array<Record<string, any>>).find((entry) => entry.group === keyId) ?? {};
    if (row.calls === calls) break;
    await new Promise((wait) => setTimeout(wait, 200));
  }
  return row;
}


async function createKey(body: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const created = await call(first, 'POST', '/v1/admin/keys', ADMIN_TOKEN, body);
  expect(created.status).toBe(201);
  return { key: created.body.key as string, id: created.body.id as string };
}

/** One short chat: its estimate (2 prompt tokens by length, 4 for the message, max_tokens 8) is a little more than the 10 the emulator reports. */
function chat(server: string, key: string, model = 'openai/gpt-test') {
  return call(server, 'POST', '/openai/v1/chat/completions', key, { model, max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] });
}

const chatCalls = () => upstream.server.requests.filter((request) => request.path.endsWith('/chat/completions')).length;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tollgate-governance-enforcement-'));
  upstream = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY, chatModels: ['gpt-test', 'gpt-other'] });
  configFile = join(work, 'tollgate.yaml');
  writeFileSync(
    configFile,
    [
      'version: 1',
      'api: { token: "api-token-unused-here" }',
      'ai: { retry_attempts: 0 }',
      'providers:',
      `  openai: { url: "${upstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 10 }`,
      'governance:',
      `  keys: { store: redis, url: "${REDIS_URL}", key_prefix: "${keyPrefix}keys:" }`,
      `  admin_token: "${ADMIN_TOKEN}"`,
      `  budgets: { store: redis, url: "${REDIS_URL}", key_prefix: "${keyPrefix}budgets:" }`,
      `  ledger: { store: postgres, url: "${PG_URL}", table: ${ledgerTable}, flush_interval: 0.2 }`,
      '',
    ].join('\n'),
  );
  [first, second] = await Promise.all([startServer(configFile), startServer(configFile)]);
}, 120_000);

afterAll(async () => {
  await servers.stopAll();
  await dropRedisKeys(REDIS_URL, keyPrefix);
  await dropLedgerTables(PG_URL, ledgerTable);
  await upstream?.close();
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => upstream.server.reset());

describe('a key budget shared by two processes on one Redis', () => {
  it('200 concurrent requests, budget for exactly 50: at most 50 succeed, the rest are 429 budget_exceeded', async () => {
    const { key, id } = await createKey({ tenant: 't-budget', name: 'load', budget_tokens: 50 * TOKENS_PER_CALL, period: 'day' });
    const answers = await Promise.all(Array.from({ length: 200 }, (_, index) => chat(index % 2 === 0 ? first : second, key)));
    const succeeded = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(succeeded.length + refused.length).toBe(200);
    expect(succeeded.length).toBeGreaterThan(0);
    expect(succeeded.length).toBeLessThanOrEqual(50);
    for (const answer of refused) {
      expect(answer.body.error).toMatchObject({ code: 'budget_exceeded' });
      expect(Date.parse(answer.headers.get('x-budget-reset') ?? '')).toBeGreaterThan(Date.now());
      expect(answer.headers.get('x-should-retry')).toBe('false');
    }
    // Refused requests never reached the upstream.
    expect(chatCalls()).toBe(succeeded.length);

    // The ledger (one PostgreSQL table written by both processes) holds what the emulator reported.
    expect(await ledgerRowOf(id, 't-budget', succeeded.length)).toMatchObject({ calls: succeeded.length, input_tokens: 7 * succeeded.length, output_tokens: 3 * succeeded.length, estimated_calls: 0 });
  }, 120_000);
});

describe('the ledger across a SIGTERM', () => {
  it('a server stopped with SIGTERM under load finishes its calls and loses no ledger entry', async () => {
    const { key, id } = await createKey({ tenant: 't-sigterm', name: 'drained' });
    // A flush interval of a minute: what reaches the ledger, the shutdown's own flush wrote.
    const slowFlush = join(work, 'slow-flush.yaml');
    writeFileSync(slowFlush, readFileSync(configFile, 'utf8').replace('flush_interval: 0.2', 'flush_interval: 60'));
    const third = servers.start(slowFlush, work);
    const origin = await third.url;
    upstream.server.delayNext(400, 30);
    const answers = Promise.all(Array.from({ length: 30 }, () => chat(origin, key).catch(() => undefined)));
    const deadline = Date.now() + 10_000;
    while (chatCalls() < 30 && Date.now() < deadline) await new Promise((wait) => setTimeout(wait, 10));
    expect(chatCalls()).toBe(30);
    const exited = new Promise((done) => third.child.once('exit', done));
    third.child.kill('SIGTERM');
    const answered = (await answers).filter((answer) => answer?.status === 200).length;
    await exited;
    // Every call in flight at the signal was drained and answered, and each is in the ledger.
    expect(answered).toBe(30);
    expect(await ledgerRowOf(id, 't-sigterm', answered)).toMatchObject({ calls: answered, input_tokens: 7 * answered, output_tokens: 3 * answered });
  }, 120_000);
});

describe('model allow-lists', () => {
  it('a model outside the key\'s list is 403 model_not_allowed before any upstream call; one inside it answers', async () => {
    const { key } = await createKey({ tenant: 't-allow', models: ['openai/gpt-other'] });
    const refused = await chat(first, key, 'openai/gpt-test');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'model_not_allowed', param: 'model' });
    const onV1 = await call(second, 'POST', '/v1/generate', key, { prompt: 'Hello', model: 'openai/gpt-test' });
    expect(onV1.status).toBe(403);
    expect(onV1.body.error).toMatchObject({ type: 'model_not_allowed' });
    expect(chatCalls()).toBe(0);
    expect((await chat(second, key, 'openai/gpt-other')).status).toBe(200);
    expect(chatCalls()).toBe(1);
  });
});
