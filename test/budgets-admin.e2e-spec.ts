/**
 * Budgets set at run time, without a restart: through /v1/admin/budgets (admin only) and `tollgate budgets`,
 * on real Redis, seen by a second application on the same Redis within the refresh interval; a spent budget
 * answers 429 budget_exceeded with X-Budget-Reset and x-should-retry: false, in OpenAI's shape on /openai/v1.
 *
 * BudgetsModule is mounted beside GovernanceModule's API auth layer (the admin token, the shared token); for
 * the miniature model route a Fastify hook sets the governance state from an `x-test-caller` header.
 */
import { Body, Controller, type INestApplication, Module, Post, Req, UseFilters } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { ApiExceptionFilter } from '../src/http/api-exception.filter';
import { DIALECT_ERROR_SHAPES } from '../src/ai/http/dialect-error-shapes';
import { GOVERNANCE_REQUEST_KEY, type GovernanceRequestState } from '../src/governance/governance-identity';
import { BudgetsModule } from '../src/governance/budgets/budgets.module';
import { GovernanceModule } from '../src/governance/governance.module';
import { GOVERNANCE_DEFAULTS } from '../src/governance/governance-settings';
import { BudgetsService } from '../src/governance/budgets/budgets.service';
import type { BudgetsSettings } from '../src/governance/budgets/budgets-settings';
import { buildDistIfStale, runCli } from './support/cli-run';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const run = randomUUID();
const keyPrefix = `tollgate:test-budgets-admin:${run}:`;
const REFRESH_MS = 200;
const ADMIN_TOKEN = 'admin-token-for-budgets-admin';
const API_TOKEN = 'api-token-for-budgets-admin';
/** One CLI run starts a Nest application: seconds on a shared two-core machine, so the bounds are generous. */
const CLI_TEST_MS = 60_000;
const settings: BudgetsSettings = {
  store: { kind: 'redis', url: REDIS_URL, keyPrefix },
  refreshMs: REFRESH_MS,
  rules: { budgets: [{ scope: 'tenant', id: '*', period: 'month', micros: 1_000_000_000 }], limits: [] },
};

/**
 * A model route in miniature: reserves one cent for the caller, settles it, answers what it spent. Its filter has
 * the dialects' error shapes, as a host app passes them (docs/decisions.md C10), so /openai/v1 answers in OpenAI's.
 */
@Controller()
@UseFilters(new ApiExceptionFilter(DIALECT_ERROR_SHAPES))
class CallController {
  constructor(private readonly budgets: BudgetsService) {}

  @Post(['v1/test/call', 'openai/v1/test/call'])
  async call(@Req() request: object, @Body() body: { micros?: number }) {
    const reservation = await this.budgets.reserve(request, { micros: body?.micros ?? 10_000, tokens: 10 });
    await this.budgets.settle(reservation, { micros: body?.micros ?? 10_000, tokens: 10 });
    return { ok: true };
  }
}

function callerFrom(header: string | string[] | undefined): GovernanceRequestState | undefined {
  if (typeof header !== 'string') return undefined;
  const [tenant, subject, role] = header.split(':');
  return { identity: { tenant, subTenant: null, subject, subjectKind: 'user', roles: [] }, admin: role === 'admin' };
}

async function startApp(): Promise<NestFastifyApplication> {
  @Module({
    imports: [GovernanceModule.forRoot({ ...GOVERNANCE_DEFAULTS, adminToken: ADMIN_TOKEN }, { mode: 'token', token: API_TOKEN }), BudgetsModule.forRoot(settings)],
    controllers: [CallController],
  })
  class TestModule {}
  const app = await NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter(), { logger: false });
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', async (request) => {
      const state = callerFrom(request.headers['x-test-caller']);
      if (state) (request as unknown as Record<string, unknown>)[GOVERNANCE_REQUEST_KEY] = state;
    });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

async function until(condition: () => Promise<boolean>, what: string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let redis: Redis;
const apps: INestApplication[] = [];
let first: NestFastifyApplication;
let second: NestFastifyApplication;

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  first = await startApp();
  second = await startApp();
  apps.push(first, second);
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  const keys = await redis.keys(`${keyPrefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const call = (app: NestFastifyApplication, tenant: string, path = '/v1/test/call', micros = 10_000) =>
  app.inject({ method: 'POST', url: path, headers: { 'x-test-caller': `${tenant}:u-1`, 'content-type': 'application/json' }, payload: { micros } });

describe('/v1/admin/budgets', () => {
  it('refuses callers without governance state (401) and callers who are not admins (403)', async () => {
    const anonymous = await first.inject({ method: 'GET', url: '/v1/admin/budgets' });
    expect(anonymous.statusCode).toBe(401);
    const tenant = await first.inject({ method: 'PUT', url: '/v1/admin/budgets', headers: { authorization: `Bearer ${API_TOKEN}` }, payload: { scope: 'tenant', id: 't-1', usd: 1000, period: 'day' } });
    expect(tenant.statusCode).toBe(403);
    expect(tenant.json().error).toEqual({ type: 'forbidden', message: 'This operation needs the admin token or an admin role.' });
  });

  it('sets a budget on one application that the other enforces within the refresh interval, without a restart', async () => {
    const tenant = `t-${randomUUID()}`;
    expect((await call(second, tenant)).statusCode).toBe(201);
    const set = await first.inject({ method: 'PUT', url: '/v1/admin/budgets', headers: ADMIN, payload: { scope: 'tenant', id: tenant, usd: 0.02, period: 'day' } });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ budget: { scope: 'tenant', id: tenant, period: 'day', usd: 0.02 } });

    // The second application re-reads the rules every REFRESH_MS: one more cent fits, the next does not.
    await until(async () => (await call(second, tenant)).statusCode === 429, 'the new budget to reach the second application');
    const refused = await call(second, tenant);
    expect(refused.statusCode).toBe(429);
    const dayEnd = new Date();
    dayEnd.setUTCHours(24, 0, 0, 0);
    expect(refused.headers['x-budget-reset']).toBe(dayEnd.toISOString());
    expect(refused.headers['x-should-retry']).toBe('false');
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(refused.json().error).toEqual({
      type: 'budget_exceeded',
      message: `The daily budget of tenant ${tenant} ($0.02) is spent; it resets at ${dayEnd.toISOString()}.`,
    });

    const openAi = await call(second, tenant, '/openai/v1/test/call');
    expect(openAi.statusCode).toBe(429);
    expect(openAi.json()).toEqual({
      error: { message: expect.stringContaining('daily budget'), type: 'insufficient_quota', param: null, code: 'budget_exceeded' },
    });
    expect(openAi.headers['x-budget-reset']).toBe(dayEnd.toISOString());

    // Raising the budget at run time lets the tenant in again.
    await first.inject({ method: 'PUT', url: '/v1/admin/budgets', headers: ADMIN, payload: { scope: 'tenant', id: tenant, usd: 1, period: 'day' } });
    await until(async () => (await call(second, tenant)).statusCode === 201, 'the raised budget to reach the second application');
  });

  it('lists configured and run-time rules in dollars, and deletes by scope, id and period', async () => {
    await first.inject({ method: 'PUT', url: '/v1/admin/budgets', headers: ADMIN, payload: { scope: 'key', id: 'k-9', tokens: 500, period: 'month', rpm: 5 } });
    const listed = await first.inject({ method: 'GET', url: '/v1/admin/budgets', headers: ADMIN });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().configured).toEqual({ budgets: [{ scope: 'tenant', id: '*', period: 'month', usd: 1000 }], limits: [] });
    expect(listed.json().runtime.budgets).toContainEqual({ scope: 'key', id: 'k-9', period: 'month', tokens: 500 });
    expect(listed.json().runtime.limits).toContainEqual({ scope: 'key', id: 'k-9', rpm: 5 });

    const deleted = await first.inject({ method: 'DELETE', url: '/v1/admin/budgets?scope=key&id=k-9', headers: ADMIN });
    expect(deleted.json()).toMatchObject({ deleted: 2 });
    const again = await first.inject({ method: 'DELETE', url: '/v1/admin/budgets?scope=key&id=k-9&period=month', headers: ADMIN });
    expect(again.statusCode).toBe(404);
    expect(again.json().error.message).toBe('No run-time rule of key k-9 for period month.');
  });

  it.each([
    [{ scope: 'tenant', id: 't-1', usd: -5, period: 'day' }, 'usd: must be a number of dollars from 0 to 10000000, got -5'],
    [{ scope: 'tenant', id: 't-1', usd: 5, period: 'week' }, 'period: must be day or month, got "week"'],
    [{ scope: 'tenant', id: 't-1', usd: 5 }, 'period: is required with usd or tokens (day or month)'],
    [{ scope: 'team', id: 't-1', rpm: 5 }, 'scope: must be one of tenant, sub_tenant, subject, key, got "team"'],
    [{ scope: 'key', id: 'k', rpm: -1, burst: 3 }, 'burst: unknown field'],
  ])('refuses %j with 400 naming the field', async (payload, message) => {
    const response = await first.inject({ method: 'PUT', url: '/v1/admin/budgets', headers: ADMIN, payload });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.type).toBe('invalid_request');
    expect(response.json().error.message).toContain(message);
  });

  it('refuses a DELETE without scope and id, naming both', async () => {
    const response = await first.inject({ method: 'DELETE', url: '/v1/admin/budgets?period=year', headers: ADMIN });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toBe('scope: must be one of tenant, sub_tenant, subject, key, got undefined; id: is required; period: must be day or month, got "year"');
  });
});

describe('tollgate budgets', () => {
  let work: string;
  let configFile: string;
  beforeAll(() => {
    buildDistIfStale();
    work = mkdtempSync(join(tmpdir(), 'tollgate-budgets-cli-'));
    configFile = join(work, 'tollgate.yaml');
    writeFileSync(configFile, `version: 1\ngovernance:\n  budgets: { store: redis, url: "${REDIS_URL}", key_prefix: "${keyPrefix}" }\n`);
  }, 180_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const cli = (...args: string[]) => runCli(['budgets', ...args, '--config', configFile], { cwd: work, timeoutMs: CLI_TEST_MS });

  it('sets a rule the running applications enforce, lists it and deletes it', async () => {
    const tenant = `t-${randomUUID()}`;
    const set = await cli('set', '--scope', 'tenant', '--id', tenant, '--usd', '0.01', '--period', 'month');
    expect(set).toMatchObject({ status: 0, stderr: '' });
    expect(set.stdout).toBe(`set tenant ${tenant}  month  usd 0.01\n`);
    await until(async () => (await call(first, tenant)).statusCode === 429, 'the CLI rule to reach the application');

    const listed = await cli('list', '--json');
    expect(JSON.parse(listed.stdout).runtime.budgets).toContainEqual({ scope: 'tenant', id: tenant, period: 'month', usd: 0.01 });
    expect((await cli('delete', '--scope', 'tenant', '--id', tenant)).stdout).toBe(`deleted 1 rule(s) of tenant ${tenant}\n`);
    const missing = await cli('delete', '--scope', 'tenant', '--id', tenant);
    expect(missing).toMatchObject({ status: 1, stderr: `tollgate: no run-time rule of tenant ${tenant}\n` });
  }, CLI_TEST_MS * 4);

  it.each([
    [['set', '--scope', 'tenant', '--id', 't', '--usd', '-5', '--period', 'day'], 'tollgate: --usd must be a non-negative number of dollars (got "-5")\n'],
    [['set', '--scope', 'tenant', '--id', 't', '--usd', '5', '--period', 'week'], 'tollgate: --period must be day or month (got "week")\n'],
    [['set', '--scope', 'tenant', '--id', 't', '--tokens', '5'], 'tollgate: --period: is required with usd or tokens (day or month)\n'],
    [['set', '--scope', 'tenant'], 'tollgate: budgets set: --id is required\n'],
    [['delete', '--scope', 'team', '--id', 't'], 'tollgate: --scope must be one of tenant, sub_tenant, subject, key (got "team")\n'],
  ])('refuses %j with exit 2 naming the option', async (args, stderr) => {
    expect(await cli(...args)).toMatchObject({ status: 2, stderr, stdout: '' });
  }, CLI_TEST_MS);

  it('refuses the memory store, which would lose the rule at exit', async () => {
    const memoryConfig = join(work, 'memory.yaml');
    writeFileSync(memoryConfig, 'version: 1\n');
    const refused = await runCli(['budgets', 'set', '--scope', 'key', '--id', 'k', '--rpm', '5', '--config', memoryConfig], { cwd: work });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('governance.budgets.store is memory');
  }, CLI_TEST_MS);
});
