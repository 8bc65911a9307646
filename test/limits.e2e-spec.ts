/**
 * Per-tenant and per-API-token rate limits of the server application (AppModule on Fastify from a loaded
 * configuration, driven through inject): the 429 envelope with Retry-After, what is and is not counted,
 * memory and real Redis counters (two application instances sharing one counter), fail-open on an
 * unreachable Redis, and nothing registered when limits are off.
 */
import { ModulesContainer } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { ApiTokenRateLimiter } from '../src/limits/api-token-rate-limiter';
import { LimitsModule } from '../src/limits/limits.module';
import { TenantRateLimitGuard } from '../src/limits/tenant-rate-limit.guard';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { TestApps } from './support/test-apps';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECRET = 'limits-test-secret-0123456789abcdef-0123456789';
const API_TOKEN = 'api-token-for-limits-tests';
const KEY = 'sk-limits-test-key';

let openai: OpenAiEmulator;
let apps: TestApps;
const prefixes: string[] = [];

beforeAll(async () => {
  openai = await OpenAiEmulator.start({ apiKey: KEY });
  apps = new TestApps('tollgate-limits-', { API_TOKEN, OPENAI_API_KEY: KEY, OPENAI_URL: openai.url, OPENAI_CHAT_MODEL: 'gpt-test' });
});

afterAll(async () => {
  await apps.close();
  await openai.close();
  const redis = new Redis(REDIS_URL);
  for (const prefix of prefixes) {
    const keys = await redis.keys(`*${prefix}*`);
    if (keys.length) await redis.del(...keys);
  }
  await redis.quit();
});

/** A unique Redis key prefix per test, removed afterwards. */
function redisPrefix(): string {
  const prefix = `tollgate:test-limits:${randomUUID()}:`;
  prefixes.push(prefix);
  return prefix;
}

const base64url = (value: string) => Buffer.from(value).toString('base64url');

function jwtFor(tenantId: string | undefined, userId = 7): string {
  const claims = { user_id: userId, ...(tenantId ? { tenant_id: tenantId } : {}), exp: Math.floor(Date.now() / 1000) + 600 };
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`;
  return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const get = (app: NestFastifyApplication, url: string, headers: Record<string, string>) => app.inject({ method: 'GET', url, headers });

function expectLimited(response: { statusCode: number; body: string; headers: Record<string, unknown> }, description: string, limit: number, windowSeconds: number) {
  expect(response.statusCode).toBe(429);
  expect(JSON.parse(response.body)).toEqual({
    error: { type: 'rate_limited', message: `The ${description} (${limit} per ${windowSeconds} s) is reached; retry after ${response.headers['retry-after']} s.` },
    request_id: response.headers['x-request-id'],
  });
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(response.headers).toMatchObject({ 'ratelimit-limit': String(limit), 'ratelimit-remaining': '0', 'ratelimit-reset': String(retryAfter) });
}

const tenantYaml = (limits: string, extra = '') => `version: 1\nauth: { jwt_secret: "${SECRET}" }\n${extra}limits: ${limits}\n`;

describe('per-tenant limit', () => {
  it('allows `limit` requests per tenant across routes, then answers 429 with Retry-After in the envelope', async () => {
    const app = await apps.build(tenantYaml('{ tenant: { limit: 3, window: 60 } }', 'api: { auth: jwt }\n'));
    const north = bearer(jwtFor('north'));
    const first = await get(app, '/auth/context', north);
    expect(first.statusCode).toBe(200);
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '3', 'ratelimit-remaining': '2' });
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(59);
    const second = await get(app, '/v1/version', north);
    expect(second.statusCode).toBe(200);
    expect(second.headers['ratelimit-remaining']).toBe('1');
    // Another user of the same tenant shares the counter.
    expect((await get(app, '/auth/context', bearer(jwtFor('north', 8)))).statusCode).toBe(200);
    expectLimited(await get(app, '/v1/version', north), 'tenant request limit', 3, 60);
    expectLimited(await get(app, '/auth/context', north), 'tenant request limit', 3, 60);
    // Other tenants have their own counters.
    expect((await get(app, '/auth/context', bearer(jwtFor('south')))).statusCode).toBe(200);
  });

  it('keeps the rate-limit headers on streamed answers of /openai/v1 and /v1', async () => {
    const app = await apps.build(tenantYaml('{ tenant: { limit: 5, window: 60 } }', 'api: { auth: jwt }\n'));
    const north = { ...bearer(jwtFor('north')), 'content-type': 'application/json' };
    const chat = await app.inject({
      method: 'POST',
      url: '/openai/v1/chat/completions',
      headers: north,
      payload: { model: 'openai/gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream: true },
    });
    expect(chat.statusCode).toBe(200);
    expect(chat.body).toContain('data: [DONE]');
    expect(chat.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'content-type': 'text/event-stream; charset=utf-8' });
    const generate = await app.inject({ method: 'POST', url: '/v1/generate', headers: north, payload: { prompt: 'Hi', stream: true } });
    expect(generate.statusCode).toBe(200);
    expect(generate.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-remaining': '3' });
  });

  it('counts only authenticated requests with a tenant id; public routes stay open', async () => {
    const app = await apps.build(tenantYaml('{ tenant: { limit: 1, window: 60 } }'));
    for (let i = 0; i < 3; i++) {
      expect((await get(app, '/auth/context', bearer('not.a.jwt'))).statusCode).toBe(401);
      expect((await get(app, '/auth/context', bearer(jwtFor(undefined)))).statusCode).toBe(200);
      expect((await get(app, '/healthz', {})).statusCode).toBe(200);
    }
    // The rejected and tenant-less requests above consumed nothing.
    expect((await get(app, '/auth/context', bearer(jwtFor('east')))).statusCode).toBe(200);
    expectLimited(await get(app, '/auth/context', bearer(jwtFor('east'))), 'tenant request limit', 1, 60);
  });

  it('shares one counter between two application instances on one Redis', async () => {
    const prefix = redisPrefix();
    const yaml = tenantYaml(`{ store: redis, redis_url: "${REDIS_URL}", redis_key_prefix: "${prefix}", tenant: { limit: 4, window: 30 } }`);
    const [first, second] = [await apps.build(yaml), await apps.build(yaml)];
    const west = bearer(jwtFor('west'));
    const statuses: number[] = [];
    for (const app of [first, second, first, second, first, second]) statuses.push((await get(app, '/auth/context', west)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expectLimited(await get(second, '/auth/context', west), 'tenant request limit', 4, 30);

    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`*${prefix}*`);
    await redis.quit();
    expect(keys.sort()).toEqual([`{${prefix}tenant:west:tenant}:blocked`, `{${prefix}tenant:west:tenant}:hits`]);
  });
});


describe('per-token limit of the /v1 API', () => {
  it('counts accepted tokens only, keyed by the token digest in Redis (never the token)', async () => {
    const prefix = redisPrefix();
    const yaml = `version: 1\nlimits: { store: redis, redis_url: "${REDIS_URL}", redis_key_prefix: "${prefix}", token: { limit: 2, window: 20 } }\n`;
    const [first, second] = [await apps.build(yaml), await apps.build(yaml)];
    for (let i = 0; i < 4; i++) expect((await get(first, '/v1/version', bearer('wrong-token'))).statusCode).toBe(401);
    expect((await get(first, '/v1/version', bearer(API_TOKEN))).statusCode).toBe(200);
    expect((await get(second, '/v1/version', bearer(API_TOKEN))).statusCode).toBe(200);
    expectLimited(await get(first, '/v1/version', bearer(API_TOKEN)), 'API token request limit', 2, 20);
    // Still 401, not 429, for a wrong token: authentication comes first.
    expect((await get(second, '/v1/version', bearer('wrong-token'))).statusCode).toBe(401);

    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`*${prefix}*`);
    await redis.quit();
    const digest = createHash('sha256').update(API_TOKEN).digest('hex');
    expect(keys.sort()).toEqual([`{${prefix}token:${digest}:token}:blocked`, `{${prefix}token:${digest}:token}:hits`]);
    expect(keys.join(' ')).not.toContain(API_TOKEN);
  });

  it('applies to POST routes too (memory store)', async () => {
    const app = await apps.build('version: 1\nlimits: { token: { limit: 1, window: 5 } }\n');
    const post = () =>
      app.inject({ method: 'POST', url: '/v1/embeddings', headers: { ...bearer(API_TOKEN), 'content-type': 'application/json' }, payload: '{"input":"a","provider":"openai"}' });
    expect((await post()).statusCode).not.toBe(429);
    expectLimited(await post(), 'API token request limit', 1, 5);
  });
});

describe('per-token limit of the OpenAI-compatible API', () => {
  it('answers 429 in OpenAI\'s error shape, with Retry-After, on the same counter as /v1', async () => {
    const app = await apps.build('version: 1\nlimits: { token: { limit: 2, window: 30 } }\n');
    expect((await get(app, '/openai/v1/models', bearer(API_TOKEN))).statusCode).toBe(200);
    expect((await get(app, '/v1/version', bearer(API_TOKEN))).statusCode).toBe(200);
    const refused = await get(app, '/openai/v1/models', bearer(API_TOKEN));
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body)).toEqual({
      error: { message: expect.stringContaining('The API token request limit (2 per 30 s) is reached'), type: 'requests', param: null, code: 'rate_limit_exceeded' },
    });
  });
});

describe('route groups', () => {
  it('give matching routes their own limits and counters; other routes keep the defaults', async () => {
    const app = await apps.build(
      tenantYaml(
        '\n  tenant: { limit: 100, window: 60 }\n  token: { limit: 3, window: 60 }\n  routes:\n' +
          '    - { name: identity, paths: [/auth/*], tenant: { limit: 1, window: 60 } }\n' +
          '    - { name: models, paths: ["%r{^/v1/mod}"], token: { limit: 1, window: 60 } }\n',
      ),
    );
    const north = bearer(jwtFor('north'));
    expect((await get(app, '/auth/context', north)).statusCode).toBe(200);
    expectLimited(await get(app, '/auth/context', north), 'tenant request limit of identity', 1, 60);

    const token = bearer(API_TOKEN);
    expect((await get(app, '/v1/models', token)).statusCode).not.toBe(429);
    expectLimited(await get(app, '/v1/models', token), 'API token request limit of models', 1, 60);
    // The default token counter is apart from the group's: three more on other routes.
    for (let i = 0; i < 3; i++) expect((await get(app, '/v1/version', token)).statusCode).toBe(200);
    expectLimited(await get(app, '/v1/version', token), 'API token request limit', 3, 60);
  });
});

describe('registration', () => {
  /** The providers of LimitsModule in the application's module graph; undefined when it is not imported. */
  function limitsProviders(app: NestFastifyApplication): unknown[] | undefined {
    const module = [...app.get(ModulesContainer).values()].find((candidate) => candidate.metatype === LimitsModule);
    return module && [...module.providers.values()].map((wrapper) => wrapper.metatype);
  }

  it('imports nothing of the limits when they are off, and no tenant guard for a token-only limit', async () => {
    const off = await apps.build(`version: 1\nauth: { jwt_secret: "${SECRET}" }\nlimits: { enabled: false, tenant: { limit: 1, window: 1 } }\n`);
    expect(limitsProviders(off)).toBeUndefined();
    for (let i = 0; i < 3; i++) expect((await get(off, '/auth/context', bearer(jwtFor('north')))).statusCode).toBe(200);
    const tokenOnly = await apps.build('version: 1\nlimits: { token: { limit: 5, window: 1 } }\n');
    expect(limitsProviders(tokenOnly)).toContain(ApiTokenRateLimiter);
    expect(limitsProviders(tokenOnly)).not.toContain(TenantRateLimitGuard);
    const tenant = await apps.build(tenantYaml('{ tenant: { limit: 5, window: 1 } }'));
    expect(limitsProviders(tenant)).toContain(TenantRateLimitGuard);
  });

  it('lets requests through uncounted while Redis is unreachable (fail open)', async () => {
    const app = await apps.build(tenantYaml('{ store: redis, redis_url: "redis://127.0.0.1:1", tenant: { limit: 1, window: 60 } }'));
    const north = bearer(jwtFor('north'));
    for (let i = 0; i < 3; i++) expect((await get(app, '/auth/context', north)).statusCode).toBe(200);
  });
});
