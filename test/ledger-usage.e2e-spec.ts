/**
 * The ledger in a Nest application on Fastify: /v1 calls recorded with the caller's identity (left by a host
 * app's API hook, from test headers) and priced, GET /v1/usage scoped to the caller's tenant
 * (every tenant for the admin) with 400/403 naming the parameter, and a shutdown that loses no entry of
 * the requests it drained (PostgreSQL, 127.0.0.1:5432, database test).
 */
import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { AiModule } from '../src/ai/ai.module';
import { loadConfig } from '../src/config/config.loader';
import type { TollgateConfig } from '../src/config/config.types';
import { installCallContextHook } from '../src/governance/call-context';
import type { GovernanceRequestState } from '../src/governance/governance-identity';
import { setGovernance } from '../src/governance/governance-state';
import { LedgerModule } from '../src/governance/ledger/ledger.module';
import { PostgresLedgerStore } from '../src/governance/ledger/postgres-ledger-store';
import { OpenAiPair } from './support/openai-pair';

const KEY = 'sk-ledger-usage-key';
const TOKEN = 'api-token-for-ledger-tests';
const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = `ledger_usage_e2e_${process.pid}`;

/**
 * The AiModule and the ledger, under the server's call-context hook; a host API hook stands in for API
 * keys, leaving the identity the test headers name (a hook may set the governance state itself).
 */
@Module({})
class LedgerTestModule {
  static forRoot(config: TollgateConfig): DynamicModule {
    const hook = (request: FastifyRequest) => {
      setGovernance(request, stateFrom(request));
      return request.headers.authorization === `Bearer ${TOKEN}`;
    };
    const ai = AiModule.forRoot({ ...config.ai, api: { ...config.ai.api, hook } });
    return { module: LedgerTestModule, imports: [ai, LedgerModule.forRoot(config.ledger, ai)] };
  }
}

let pair: OpenAiPair;
let work: string;
let sql: Client;

beforeAll(async () => {
  pair = await OpenAiPair.start(KEY);
  work = mkdtempSync(join(tmpdir(), 'tollgate-ledger-usage-'));
  sql = new Client({ connectionString: PG_URL });
  await sql.connect();
});

afterAll(async () => {
  await sql.query(`DROP TABLE IF EXISTS ${TABLE}, ${TABLE}_daily`);
  await sql.end();
  await pair.close();
  rmSync(work, { recursive: true, force: true });
});

/** The identity the keys slice's auth layer would attach, read here from test headers; the admin is an operator, as the admin token is. */
function stateFrom(request: FastifyRequest): GovernanceRequestState {
  const tenant = request.headers['x-test-tenant'];
  const admin = request.headers['x-test-admin'] === 'yes';
  return {
    identity: { tenant: typeof tenant === 'string' ? tenant : null, subTenant: null, subject: `user-of-${String(tenant)}`, subjectKind: 'user', roles: [] },
    admin,
    operator: admin,
  };
}

async function start(ledgerYaml: string): Promise<NestFastifyApplication> {
  const file = join(work, `config-${Date.now()}-${Math.random()}.yaml`);
  writeFileSync(file, `version: 1\nai: { retry_attempts: 0 }\nproviders:\n  openai: {}\n${ledgerYaml}`);
  const config = loadConfig({ cwd: work, configPath: file, env: { ...pair.env(), API_TOKEN: TOKEN } });
  const app = await NestFactory.create<NestFastifyApplication>(LedgerTestModule.forRoot(config), new FastifyAdapter(), { logger: false });
  installCallContextHook(app.getHttpAdapter().getInstance());
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

const as = (tenant: string | null, admin = false) => ({
  authorization: `Bearer ${TOKEN}`,
  ...(tenant !== null ? { 'x-test-tenant': tenant } : {}),
  ...(admin ? { 'x-test-admin': 'yes' } : {}),
});

const PRICED = 'governance:\n  pricing: { models: { "openai/gpt-test": { input: 1, output: 2 } } }\n';

describe('GET /v1/usage', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await start(PRICED);
    const calls = [
      app.inject({ method: 'POST', url: '/v1/generate', headers: as('t-1'), payload: { prompt: 'hello' } }),
      app.inject({ method: 'POST', url: '/v1/generate', headers: as('t-1'), payload: { messages: [{ role: 'user', content: 'hi' }] } }),
      app.inject({ method: 'POST', url: '/v1/generate', headers: as('t-2'), payload: { messages: [{ role: 'user', content: 'hi' }], stream: true } }),
      app.inject({ method: 'POST', url: '/v1/embeddings', headers: as('t-2'), payload: { input: 'one' } }),
    ];
    for (const response of await Promise.all(calls)) expect(response.statusCode).toBe(200);
  });
  afterAll(() => app.close());

  const usage = (query: string, headers: Record<string, string>) => app.inject({ method: 'GET', url: `/v1/usage${query}`, headers });

  it("shows a caller its own tenant's calls, tokens as the upstream reported them and cost from the price table", async () => {
    const response = await usage('?group_by=tenant', as('t-1'));
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ group_by: 'tenant', tenant: 't-1' });
    // Two calls of 7 input and 3 output tokens at $1 / $2 per million: 2 × (7 + 6) micro-dollars.
    const t1 = { group: 't-1', calls: 2, input_tokens: 14, output_tokens: 6, cached_tokens: 0, cost_usd: 0.000026, unpriced_calls: 0, estimated_calls: 0 };
    expect(body.rows).toEqual([t1]);
    expect(body.totals).toEqual({ ...t1, group: null });
  });

  it('shows the admin every tenant, or the one it names, grouped as asked', async () => {
    const all = (await usage('?group_by=tenant', as(null, true))).json();
    expect(all.tenant).toBeNull();
    expect(all.rows.map((row: { group: string; calls: number }) => [row.group, row.calls])).toEqual([
      ['t-1', 2],
      ['t-2', 2],
    ]);
    const t2 = (await usage('?group_by=model&tenant=t-2', as(null, true))).json();
    expect(t2.rows.map((row: { group: string; calls: number; unpriced_calls: number }) => [row.group, row.calls, row.unpriced_calls])).toEqual([
      ['openai/embed-test', 1, 1],
      ['openai/gpt-test', 1, 0],
    ]);
    const byDay = (await usage(`?group_by=day&from=${new Date(Date.now() - 86_400_000).toISOString()}`, as(null, true))).json();
    expect(byDay.totals.calls).toBe(4);
  });

  it('refuses a look at another tenant (403) and names the bad parameter (400)', async () => {
    const other = await usage('?tenant=t-2', as('t-1'));
    expect(other.statusCode).toBe(403);
    expect(other.json().error).toEqual({ type: 'forbidden', message: 'tenant: a caller may only see its own tenant' });
    const group = await usage('?group_by=week', as('t-1'));
    expect(group.statusCode).toBe(400);
    expect(group.json().error.message).toBe('group_by must be one of tenant, sub_tenant, subject, key, provider, model, day');
    const from = await usage('?from=last-tuesday', as('t-1'));
    expect(from.statusCode).toBe(400);
    expect(from.json().error.message).toMatch(/^from must be a date/);
    expect((await usage('?from=2026-11-02&to=2026-11-01', as('t-1'))).json().error.message).toBe('from must be before to');
    expect((await usage('', as(null))).statusCode).toBe(403);
    expect((await app.inject({ method: 'GET', url: '/v1/usage' })).statusCode).toBe(401);
  });
});

describe('a client that disconnects mid-stream', () => {
  it('still has its call recorded, under its tenant, with the tokens estimated', async () => {
    const app = await start('');
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    try {
      pair.openai.server.inject({ kind: 'stream', stallAfter: 2 });
      // node:http, so the disconnect is a closed socket, as with a browser tab going away.
      await new Promise<void>((resolve, reject) => {
        const request = httpRequest(`http://127.0.0.1:${port}/v1/generate`, { method: 'POST', headers: { ...as('t-gone'), 'content-type': 'application/json' } });
        request.on('error', reject);
        request.on('response', (response) => {
          let received = '';
          response.on('data', (chunk: Buffer) => {
            received += chunk.toString('utf8');
            if (!received.includes('event: delta')) return;
            request.destroy();
            resolve();
          });
        });
        request.end(JSON.stringify({ messages: [{ role: 'user', content: 'a question of forty characters in total' }], stream: true }));
      });
      await pair.openai.server.waitForAbort();
      const deadline = Date.now() + 10_000;
      let row: { calls: number; input_tokens: number; estimated_calls: number } | undefined;
      while (!row && Date.now() < deadline) {
        const body = (await app.inject({ method: 'GET', url: '/v1/usage?group_by=tenant', headers: as('t-gone') })).json();
        row = body.rows[0];
        if (!row) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(row).toMatchObject({ group: 't-gone', calls: 1, estimated_calls: 1, input_tokens: Math.ceil('a question of forty characters in total'.length / 4) });
    } finally {
      await app.close();
    }
  });
});

describe('shutdown', () => {
  it('writes every entry of the drained requests to PostgreSQL before the application stops', async () => {
    const app = await start(
      `governance:\n  ledger: { store: postgres, url: "${PG_URL}", table: ${TABLE}, batch_size: 1000, flush_interval: 3600 }\n`,
    );
    const requests = Array.from({ length: 40 }, (_, i) =>
      app.inject({
        method: 'POST',
        url: '/v1/generate',
        headers: as(`t-${i % 3}`),
        payload: { messages: [{ role: 'user', content: `question ${i}` }], ...(i % 2 === 0 ? { stream: true } : {}) },
      }),
    );
    for (const response of await Promise.all(requests)) expect(response.statusCode).toBe(200);
    // Nothing written yet: the batch is not full and the interval is an hour away.
    const before = await sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${TABLE}`).catch(() => ({ rows: [{ n: '0' }] }));
    expect(Number(before.rows[0].n)).toBe(0);
    await app.close();

    const reader = new PostgresLedgerStore({ url: PG_URL, table: TABLE, retentionDays: 31 });
    const rows = await reader.usage({ from: Date.now() - 3_600_000, to: Date.now() + 60_000, groupBy: 'tenant' });
    await reader.close();
    expect(rows.map((row) => [row.group, row.calls])).toEqual([
      ['t-0', 14],
      ['t-1', 13],
      ['t-2', 13],
    ]);
    const emulated = pair.openai.server.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
    expect(rows.reduce((sum, row) => sum + row.inputTokens, 0)).toBe(7 * 40);
    expect(rows.reduce((sum, row) => sum + row.outputTokens, 0)).toBe(3 * 40);
    expect(emulated).toBeGreaterThanOrEqual(40);
  });
});
