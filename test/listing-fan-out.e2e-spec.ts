/**
 * Listings and health reports do not fan out (issue 27): /v1/health, /v1/models, /openai/v1/models and
 * /openai/v1/models/{id} answer from one upstream call per provider for ai.health_cache_ttl, shared by concurrent
 * callers, and each counts as one request against the caller's RPM (a key with rpm: 1 had made 100 upstream
 * requests with 50 listings).
 */
import { OpenAiPair } from './support/openai-pair';
import { TestApps } from './support/test-apps';
import { awayFromMinuteEdge } from './support/timing';

const ADMIN_TOKEN = 'admin-token-for-listing-fan-out';
const API_TOKEN = 'api-token-for-listing-fan-out';
const UPSTREAM_KEY = 'sk-emulator-listing-fan-out';
/** One call per provider and route kind, and a little room for a cache entry that ends during a test. */
const A_HANDFUL = 6;

let apps: TestApps;
let upstreams: OpenAiPair;
let origin: string;

beforeAll(async () => {
  upstreams = await OpenAiPair.start(UPSTREAM_KEY);
  apps = new TestApps('tollgate-listing-fan-out-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      `api: { token: "${API_TOKEN}" }`,
      'ai: { retry_attempts: 0, health_cache_ttl: 30 }',
      'providers:',
      `  openai: { url: "${upstreams.openai.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 10 }`,
      `  deepseek: { url: "${upstreams.deepseek.url}", api_key: "${UPSTREAM_KEY}", chat_model: deepseek-chat, timeout: 10 }`,
      `governance: { admin_token: "${ADMIN_TOKEN}" }`,
      '',
    ].join('\n'),
  ));
});

afterAll(async () => {
  await apps.close();
  await upstreams.close();
});

const upstreamCalls = () => upstreams.openai.server.requests.length + upstreams.deepseek.server.requests.length;

async function get(path: string, bearer: string): Promise<number> {
  const response = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${bearer}` } });
  await response.arrayBuffer();
  return response.status;
}

async function keyWithRpm(rpm: number): Promise<string> {
  const response = await fetch(`${origin}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 't-listings', name: 'lister', rpm }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

const times = <T>(count: number, run: () => Promise<T>) => Promise.all(Array.from({ length: count }, run));

describe('model listings and health', () => {
  it('50 concurrent listings of a key with rpm: 1: one answered, 49 refused 429, and a handful of upstream calls at most', async () => {
    await awayFromMinuteEdge();
    const key = await keyWithRpm(1);
    const before = upstreamCalls();
    const statuses = await times(50, () => get('/openai/v1/models', key));
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 429)).toHaveLength(49);
    expect(upstreamCalls() - before).toBeLessThanOrEqual(A_HANDFUL);
  });

  it("counts a health report and a model lookup against the caller's RPM like any request", async () => {
    await awayFromMinuteEdge();
    const key = await keyWithRpm(1);
    expect(await get('/v1/health', key)).toBe(200);
    expect(await get('/v1/health', key)).toBe(429);
    expect(await get('/openai/v1/models/openai/gpt-other', key)).toBe(429);
  });

  it('answers 50 of each listing and health report of an unlimited caller from a handful of upstream calls', async () => {
    const before = upstreamCalls();
    for (const path of ['/v1/health', '/v1/health?provider=deepseek', '/v1/models', '/v1/models?provider=openai', '/openai/v1/models', '/openai/v1/models/openai/gpt-other']) {
      const statuses = await times(50, () => get(path, API_TOKEN));
      expect(new Set(statuses)).toEqual(new Set([path.endsWith('gpt-other') ? 404 : 200]));
    }
    expect(upstreamCalls() - before).toBeLessThanOrEqual(A_HANDFUL);
  });
});
