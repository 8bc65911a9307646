/**
 * Metrics and logs of the real application (AppModule on Fastify from a loaded configuration): /metrics
 * fed by HTTP responses, provider calls (retries, fallbacks), the AuthModule's decisions and permission
 * cache on real Redis, and agent runs; its own token and settings.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHmac, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RbacService } from '../src/auth/rbac/rbac.service';
import { loadConfig } from '../src/config/config.loader';
import type { OpenAiEmulator } from './emulators/openai-emulator';
import { OpenAiPair } from './support/openai-pair';
import { TestApps } from './support/test-apps';

const KEY = 'sk-observability-KEY-9931';
const API_TOKEN = 'api-token-for-observability';
const METRICS_TOKEN = 'metrics-token-for-observability';
const JWT_SECRET = 'o'.repeat(48);
const REDIS_URL = 'redis://127.0.0.1:6379';

let pair: OpenAiPair;
let openai: OpenAiEmulator;
let apps: TestApps;

beforeAll(async () => {
  pair = await OpenAiPair.start(KEY);
  ({ openai } = pair);
  apps = new TestApps('tollgate-observability-', { ...pair.env(), API_TOKEN });
});

afterAll(async () => {
  await apps.close();
  await pair.close();
});

const base64url = (value: string) => Buffer.from(value).toString('base64url');
function signHs256(payload: Record<string, unknown>): string {
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(payload))}`;
  return `${head}.${createHmac('sha256', JWT_SECRET).update(head).digest('base64url')}`;
}
const tokenFor = (roles: string[]) =>
  signHs256({ user_id: 7, tenant_id: 't-1', role_ids: roles, exp: Math.floor(Date.now() / 1000) + 600 });

/** The value of one sample line of the exposition, e.g. `name{a="b"}`; undefined when absent. */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  let app: NestFastifyApplication;
  const api = { authorization: `Bearer ${API_TOKEN}` };
  const scrape = async () => {
    const response = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.statusCode).toBe(200);
    return response.body;
  };
  const post = (url: string, body: unknown) =>
    app.inject({ method: 'POST', url, headers: { ...api, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  beforeAll(async () => {
    const recordKey = `observability-${randomUUID()}`;
    app = await apps.build(
      [
        'version: 1',
        'ai: { retry_attempts: 1, retry_delay: 0.001 }',
        'providers:',
        '  openai: { timeout: 2 }',
        '  deepseek: {}',
        'auth:',
        '  rbac_enabled: true',
        '  rbac_cache_store: redis',
        `  rbac_cache_store_options: { url: "${REDIS_URL}" }`,
        '  permissions_cache_store: redis',
        `  permissions_cache_store_options: { url: "${REDIS_URL}" }`,
        `  rbac_record_key: ${recordKey}`,
        'metrics: { enabled: true }',
        '',
      ].join('\n'),
      { JWT_SECRET, METRICS_TOKEN },
    );
    await app.get(RbacService).setRecord({ permissions: { admin: ['*:*'], guest: ['nothing/here:get'] } });
  });

  it('needs its own token when one is configured: 401 in the error envelope without it, the API token does not do', async () => {
    for (const headers of [{}, api, { authorization: 'Bearer wrong' }]) {
      const response = await app.inject({ method: 'GET', url: '/metrics', headers });
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
      expect(response.json()).toEqual({
        error: { type: 'authentication_required', message: 'A valid metrics token is required.' },
        request_id: response.headers['x-request-id'],
      });
    }
    const scraped = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.statusCode).toBe(200);
    expect(scraped.headers['content-type']).toContain('text/plain');
    expect(scraped.body).toContain('# TYPE tollgate_http_requests_total counter');
  });

  it('counts HTTP requests by route pattern and status, with a latency histogram; unknown URLs share one label', async () => {
    const before = await scrape();
    const series = 'tollgate_http_requests_total{method="GET",route="/healthz",status="200"}';
    const initial = sample(before, series) ?? 0;
    for (let i = 0; i < 3; i++) expect((await app.inject({ method: 'GET', url: '/healthz?probe=1' })).statusCode).toBe(200);
    await app.inject({ method: 'GET', url: `/no/such/${randomUUID()}` });
    const after = await scrape();
    expect(sample(after, series)).toBe(initial + 3);
    expect(sample(after, 'tollgate_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"}')).toBe(initial + 3);
    expect(sample(after, 'tollgate_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/healthz",status="200"}')).toBe(initial + 3);
    expect(after).toMatch(/tollgate_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    expect(after).not.toContain('/no/such');
    expect(after).not.toContain('probe=1');
  });

  it('counts auth decisions by guard and code, and permission cache hits and misses', async () => {
    const get = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/auth/context', headers });
    expect((await get({})).statusCode).toBe(401);
    expect((await get({ authorization: `Bearer ${tokenFor(['admin'])}x` })).statusCode).toBe(401);
    expect((await get({ authorization: `Bearer ${tokenFor(['guest'])}` })).statusCode).toBe(403);
    const admin = { authorization: `Bearer ${tokenFor(['admin'])}` };
    expect((await get(admin)).statusCode).toBe(200);
    expect((await get(admin)).statusCode).toBe(200);

    const metrics = await scrape();
    expect(sample(metrics, 'tollgate_auth_decisions_total{guard="jwt",outcome="denied",status="401",code="missing_token"}')).toBe(1);
    expect(sample(metrics, 'tollgate_auth_decisions_total{guard="jwt",outcome="denied",status="401",code="invalid_signature"}')).toBe(1);
    expect(sample(metrics, 'tollgate_auth_decisions_total{guard="jwt",outcome="allowed",status="200",code="allowed"}')).toBe(3);
    expect(sample(metrics, 'tollgate_auth_decisions_total{guard="rbac",outcome="denied",status="403",code="rbac_denied"}')).toBe(1);
    expect(sample(metrics, 'tollgate_auth_decisions_total{guard="rbac",outcome="allowed",status="200",code="allowed"}')).toBe(2);
    // guest: evaluated (miss) and denied; admin: evaluated once (miss), then answered from the cache (hit).
    expect(sample(metrics, 'tollgate_rbac_permission_cache_total{result="miss"}')).toBe(2);
    expect(sample(metrics, 'tollgate_rbac_permission_cache_total{result="hit"}')).toBe(1);
    expect(sample(metrics, 'tollgate_http_requests_total{method="GET",route="/auth/context",status="401"}')).toBe(2);
  });

  it('counts provider calls by provider, operation and status, retries and fallbacks', async () => {
    pair.reset();
    openai.rateLimitNext('0', 1);
    expect((await post('/v1/generate', { prompt: 'Hi' })).statusCode).toBe(200);
    openai.serverErrorNext(503, 1);
    const fallback = await post('/v1/generate', { prompt: 'Hi' });
    expect(fallback.json()).toMatchObject({ provider: 'deepseek' });
    expect((await post('/v1/embeddings', { input: 'hello' })).statusCode).toBe(200);

    const metrics = await scrape();
    expect(sample(metrics, 'tollgate_provider_requests_total{provider="openai",operation="generate",status="error",error_type="rate_limited"}')).toBe(1);
    expect(sample(metrics, 'tollgate_provider_requests_total{provider="openai",operation="generate",status="error",error_type="provider_error"}')).toBe(1);
    expect(sample(metrics, 'tollgate_provider_requests_total{provider="openai",operation="generate",status="success",error_type=""}')).toBe(1);
    expect(sample(metrics, 'tollgate_provider_requests_total{provider="deepseek",operation="generate",status="success",error_type=""}')).toBe(1);
    expect(sample(metrics, 'tollgate_provider_requests_total{provider="openai",operation="embed",status="success",error_type=""}')).toBe(1);
    expect(sample(metrics, 'tollgate_provider_retries_total{provider="openai",operation="generate"}')).toBe(1);
    expect(sample(metrics, 'tollgate_provider_fallbacks_total{from="openai",to="deepseek",operation="generate"}')).toBe(1);
    expect(sample(metrics, 'tollgate_provider_request_duration_seconds_count{provider="openai",operation="generate",status="success"}')).toBe(1);
    expect(metrics).not.toContain(KEY);
  });

  it('counts agent runs by outcome', async () => {
    openai.server.reset();
    expect((await post('/v1/agent', { prompt: 'What is Tollgate?', tools: [] })).statusCode).toBe(200);
    expect((await post('/v1/agent', { prompt: 'x', tools: ['no_such_tool'] })).statusCode).toBe(400);
    const metrics = await scrape();
    expect(sample(metrics, 'tollgate_agent_runs_total{outcome="completed"}')).toBe(1);
    expect(sample(metrics, 'tollgate_agent_runs_total{outcome="init_failed"}')).toBe(1);
    expect(sample(metrics, 'tollgate_agent_run_duration_seconds_count{outcome="completed"}')).toBe(1);
  });
});

describe('/metrics settings', () => {
  it('is open without a token, like /healthz, and needs neither the API token nor a JWT', async () => {
    const app = await apps.build('version: 1\n', { JWT_SECRET });
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('tollgate_process_cpu_seconds_total');
  });

  it('is not served with metrics.enabled false', async () => {
    const app = await apps.build('version: 1\nmetrics: { enabled: false }\n');
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });

  it('refuses an unknown metrics option and an empty token at configuration load', () => {
    const file = join(apps.work, 'bad-metrics.yaml');
    writeFileSync(file, 'version: 1\nmetrics: { path: /m }\n');
    expect(() => loadConfig({ cwd: apps.work, configPath: file, env: {} })).toThrow(/metrics/);
    writeFileSync(file, 'version: 1\nmetrics: { token: "" }\n');
    expect(() => loadConfig({ cwd: apps.work, configPath: file, env: {} })).toThrow(/metrics\.token/);
  });
});
