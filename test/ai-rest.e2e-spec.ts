/**
 * The /v1 REST API of the real application (AppModule on Fastify, built from a loaded configuration),
 * driven through Fastify's inject against loopback provider emulators: every endpoint's success and
 * error shapes, request ids, the auth hook, 404/405/413, bounds and prefix mounting.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHmac } from 'node:crypto';
import { packageVersion } from '../src/common/packaged-files';
import { startEmulator } from './emulators/emulator-server';
import { type OpenAiEmulator, UPSTREAM_MARKER, vectorFor } from './emulators/openai-emulator';
import { OpenAiPair } from './support/openai-pair';
import { TestApps } from './support/test-apps';

const KEY = 'sk-rest-test-KEY-5512';
const TOKEN = 'api-token-for-rest-tests';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let pair: OpenAiPair;
let openai: OpenAiEmulator;
let deepseek: OpenAiEmulator;
/** The server's applications, ready for inject(), configured against the emulators. */
let apps: TestApps;

beforeAll(async () => {
  pair = await OpenAiPair.start(KEY);
  ({ openai, deepseek } = pair);
  apps = new TestApps('tollgate-rest-', { ...pair.env(), API_TOKEN: TOKEN });
});

afterAll(async () => {
  await apps.close();
  await pair.close();
});

beforeEach(() => pair.reset());

// The pair's DEEPSEEK_* variables fill `deepseek`; a providers: section must name it to have it.
/** health_cache_ttl 0: every listing and health report asks the emulators afresh, which these tests change between calls. */
const BASE_YAML = 'version: 1\nai: { retry_attempts: 0, health_cache_ttl: 0 }\nproviders:\n  openai: { timeout: 0.5 }\n  deepseek: {}\n';
const auth = { authorization: `Bearer ${TOKEN}` };

describe('/v1 API', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await apps.build(BASE_YAML);
  });

  const get = (url: string, headers: Record<string, string> = auth) => app.inject({ method: 'GET', url, headers });
  const post = (url: string, body: unknown, headers: Record<string, string> = auth) =>
    app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: typeof body === 'string' ? body : JSON.stringify(body) });

  /** Asserts the error envelope: status, type, a message containing `says`, and no upstream text or key. */
  function expectError(response: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number, type: string, says?: string) {
    expect(response.statusCode).toBe(status);
    const body = JSON.parse(response.body);
    expect(body).toEqual({ error: { type, message: expect.any(String) }, request_id: response.headers['x-request-id'] });
    if (says) expect(body.error.message).toContain(says);
    expect(response.body).not.toContain(UPSTREAM_MARKER);
    expect(response.body).not.toContain(KEY);
    expect(response.body).not.toContain('127.0.0.1');
  }

  describe('request ids', () => {
    it('echoes a safe X-Request-Id in the header and the body', async () => {
      const response = await get('/v1/version', { ...auth, 'x-request-id': 'trace-1.2:3' });
      expect(response.headers['x-request-id']).toBe('trace-1.2:3');
      expect(response.json().request_id).toBe('trace-1.2:3');
    });

    it('replaces an unsafe one with a UUID, on errors and unknown routes too', async () => {
      const bad = await get('/v1/version', { ...auth, 'x-request-id': 'has space' });
      expect(bad.headers['x-request-id']).toMatch(UUID);
      const missing = await get('/nowhere');
      expect(missing.headers['x-request-id']).toMatch(UUID);
      expect(missing.json().request_id).toBe(missing.headers['x-request-id']);
    });
  });

  describe('authentication hook', () => {
    it('401 authentication_required with WWW-Authenticate: Bearer without or with a wrong token', async () => {
      for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Basic ${TOKEN}` }] as Array<Record<string, string>>) {
        const response = await get('/v1/providers', headers);
        expectError(response, 401, 'authentication_required');
        expect(response.headers['www-authenticate']).toBe('Bearer');
      }
      expect(openai.server.requests).toHaveLength(0);
    });

    it('leaves /healthz and /readyz public', async () => {
      expect((await get('/healthz', {})).statusCode).toBe(200);
      const ready = await get('/readyz', {});
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready', checks: { providers: 'ok' } });
    });
  });

  it('GET /v1/version: package version and API version 1', async () => {
    const response = await get('/v1/version');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ version: packageVersion(), api_version: '1', request_id: response.headers['x-request-id'] });
  });

  it('GET /v1/providers: settings in registration order, never a key', async () => {
    const response = await get('/v1/providers');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.default_provider).toBe('openai');
    expect(body.providers.map((p: { name: string }) => p.name)).toEqual(['openai', 'deepseek']);
    expect(body.providers[0]).toMatchObject({ kind: 'openai', chat_model: 'gpt-test', embedding_model: 'embed-test', timeout_ms: 500, default: true });
    expect(body.providers[1].capabilities).toMatchObject({ generate: true, embeddings: false, batch_embeddings: false });
    expect(response.body).not.toContain(KEY);
  });

  describe('GET /v1/models', () => {
    it('lists every provider\'s models, or one provider\'s with ?provider=', async () => {
      const all = (await get('/v1/models')).json();
      expect(all.models.map((m: { id: string; provider: string }) => `${m.provider}/${m.id}`)).toEqual([
        'openai/gpt-test', 'openai/embed-test', 'deepseek/deepseek-chat',
      ]);
      expect(all.errors).toEqual([]);
      const one = (await get('/v1/models?provider=deepseek')).json();
      expect(one.models).toEqual([{ id: 'deepseek-chat', provider: 'deepseek', owned_by: 'emulator' }]);
    });

    it('400 for an unknown provider, a malformed name or an unknown parameter', async () => {
      expectError(await get('/v1/models?provider=nope'), 400, 'unknown_provider', "unknown provider 'nope'");
      expectError(await get('/v1/models?provider=a%20b'), 400, 'invalid_request', 'provider must be a provider name');
      expectError(await get('/v1/models?limit=3'), 400, 'invalid_request', 'unknown field "limit"');
    });

    it('reports a failing provider in errors while listing the others', async () => {
      deepseek.serverErrorNext(500);
      const body = (await get('/v1/models')).json();
      expect(body.models).toHaveLength(2);
      expect(body.errors).toEqual([{ provider: 'deepseek', type: 'provider_error', message: 'deepseek: upstream returned 500' }]);
    });
  });

  it('GET /v1/capabilities: truthful per provider', async () => {
    const body = (await get('/v1/capabilities')).json();
    expect(body.providers).toEqual([
      { provider: 'openai', kind: 'openai', capabilities: { generate: true, embeddings: true, batch_embeddings: true, streaming: true, list_models: true, tools: true, structured_output: true, vision: true } },
      { provider: 'deepseek', kind: 'deepseek', capabilities: { generate: true, embeddings: false, batch_embeddings: false, streaming: true, list_models: true, tools: true, structured_output: true, vision: false } },
    ]);
  });

  it('GET /v1/health: per-provider status, reachable, ready, identity', async () => {
    const body = (await get('/v1/health')).json();
    expect(body.status).toBe('healthy');
    expect(body.providers).toEqual([
      expect.objectContaining({ provider: 'openai', kind: 'openai', status: 'healthy', reachable: true, ready: true, model: 'gpt-test' }),
      expect.objectContaining({ provider: 'deepseek', kind: 'deepseek', status: 'healthy', reachable: true, ready: true }),
    ]);
    deepseek.serverErrorNext(503);
    const degraded = (await get('/v1/health')).json();
    expect(degraded.status).toBe('degraded');
    expect(degraded.providers[1]).toMatchObject({ status: 'unhealthy', reachable: true, ready: false, error: 'deepseek: upstream returned 503' });
  });

  describe('POST /v1/generate', () => {
    it('200 with the response, the provider that answered, model and usage', async () => {
      const response = await post('/v1/generate', { prompt: 'Hello', max_tokens: 5, temperature: 0, context: [{ title: 'T', body: 'B' }] });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ provider: 'openai', model: 'gpt-test', finish_reason: 'stop', usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } });
      expect(body.response).toContain('Question: Hello');
      expect(body.request_id).toBe(response.headers['x-request-id']);
      const sent = openai.server.lastRequest!.body as { messages: Array<{ content: string }>; max_completion_tokens: number };
      expect(sent.max_completion_tokens).toBe(5);
      expect(sent.messages[1].content).toContain('[1] title: T\nbody: B');
    });

    it('answers from the next provider when the first fails with 5xx, unless the call disables fallback', async () => {
      openai.serverErrorNext(503);
      const fallback = await post('/v1/generate', { prompt: 'Hi' });
      expect(fallback.statusCode).toBe(200);
      expect(fallback.json()).toMatchObject({ provider: 'deepseek', model: 'deepseek-chat' });

      openai.serverErrorNext(503);
      expectError(await post('/v1/generate', { prompt: 'Hi', enable_fallback: false }), 502, 'provider_error', 'openai: upstream returned 503');
    });

    it.each([
      [{}, 'prompt must be a string'],
      [{ prompt: '' }, 'prompt must be longer than or equal to 1 characters'],
      [{ prompt: 'x', temperature: 3 }, 'temperature must not be greater than 2'],
      [{ prompt: 'x', max_tokens: 1.5 }, 'max_tokens must be an integer number'],
      [{ prompt: 'x', foo: 1 }, 'unknown field "foo"'],
      [{ prompt: 'x', context: [1] }, 'context[0] must be a string or an object'],
      [{ prompt: 'x', enable_fallback: 'no' }, 'enable_fallback must be a boolean value'],
    ])('400 invalid_request naming the field for %j', async (body, says) => {
      expectError(await post('/v1/generate', body), 400, 'invalid_request', says);
      expect(openai.server.requests).toHaveLength(0);
    });

    it('400 invalid_json for a body that does not parse, without the parser\'s words', async () => {
      const response = await post('/v1/generate', '{"prompt": ');
      expectError(response, 400, 'invalid_json', 'The request body is not valid JSON.');
    });

    it('400 unknown_provider for a provider that is not registered', async () => {
      expectError(await post('/v1/generate', { prompt: 'x', provider: 'ghost' }), 400, 'unknown_provider', "unknown provider 'ghost'");
    });

    it('maps provider failures: 429 + Retry-After, 422, 502 auth, 502 invalid response, 503, 504', async () => {
      openai.rateLimitNext('7');
      const limited = await post('/v1/generate', { prompt: 'x', enable_fallback: false });
      expectError(limited, 429, 'rate_limited');
      expect(limited.headers['retry-after']).toBe('7');

      expectError(await post('/v1/generate', { prompt: 'x', model: 'openai/no-such-model', enable_fallback: false }), 422, 'model_not_available', "model 'no-such-model'");

      openai.server.failNext(401, { body: { error: { message: `bad key ${UPSTREAM_MARKER}`, type: 'invalid_request_error', code: 'invalid_api_key' } } });
      expectError(await post('/v1/generate', { prompt: 'x' }), 502, 'provider_authentication');

      openai.server.malformedNext();
      expectError(await post('/v1/generate', { prompt: 'x' }), 502, 'invalid_provider_response');

      openai.server.resetNext();
      expectError(await post('/v1/generate', { prompt: 'x', enable_fallback: false }), 503, 'connection_error');

      openai.server.delayNext(2000);
      expectError(await post('/v1/generate', { prompt: 'x', enable_fallback: false }), 504, 'timeout', 'within 500 ms');
    });
  });

  describe('POST /v1/embeddings and /v1/embeddings/batch', () => {
    it('single embedding with its dimensions and provider', async () => {
      const response = await post('/v1/embeddings', { input: 'hello' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        embedding: vectorFor('hello', 4),
        provider: 'openai',
        model: 'embed-test',
        dimensions: 4,
        request_id: response.headers['x-request-id'],
      });
    });

    it('a batch is one upstream call, results in input order', async () => {
      const inputs = ['a', 'bb', 'ccc'];
      const response = await post('/v1/embeddings/batch', { inputs });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ embeddings: inputs.map((t) => vectorFor(t, 4)), count: 3, provider: 'openai' });
      expect(openai.server.requestsTo('/v1/embeddings')).toHaveLength(1);
    });

    it('bounds: 1..32 inputs, each a non-empty string', async () => {
      expectError(await post('/v1/embeddings/batch', { inputs: [] }), 400, 'invalid_request', 'inputs must contain at least 1 elements');
      expectError(await post('/v1/embeddings/batch', { inputs: Array.from({ length: 33 }, (_, i) => `t${i}`) }), 400, 'invalid_request', 'inputs must hold 1 to 32 texts');
      expectError(await post('/v1/embeddings/batch', { inputs: ['a', 3] }), 400, 'invalid_request', 'each value in inputs must be a string');
      expectError(await post('/v1/embeddings', { input: '' }), 400, 'invalid_request', 'input must be longer than or equal to 1 characters');
      expect(openai.server.requests).toHaveLength(0);
    });

    it('400 capability_not_supported for embeddings on a generation-only provider', async () => {
      expectError(await post('/v1/embeddings', { input: 'x', provider: 'deepseek' }), 400, 'capability_not_supported', 'deepseek does not support embeddings');
    });
  });

  describe('routing errors', () => {
    it('404 not_found for an unknown route', async () => {
      expectError(await get('/v1/nothing'), 404, 'not_found');
    });

    it('405 method_not_allowed with Allow for a wrong method', async () => {
      const response = await app.inject({ method: 'DELETE', url: '/v1/generate', headers: auth });
      expectError(response, 405, 'method_not_allowed');
      expect(response.headers.allow).toBe('POST');
    });

    it('413 payload_too_large over the 1 MiB body limit, and over the 20 MiB chat limit on /v1/generate', async () => {
      expectError(await post('/v1/embeddings', { input: 'x'.repeat(1024 * 1024) }), 413, 'payload_too_large');
      expectError(await post('/v1/generate', { prompt: 'x'.repeat(20 * 1024 * 1024) }), 413, 'payload_too_large');
      expect(openai.server.requests).toHaveLength(0);
    });

    it('404 model_not_found for a model no provider serves, before any upstream call', async () => {
      expectError(await post('/v1/generate', { prompt: 'x', model: 'no-such-model' }), 404, 'model_not_found', "model 'no-such-model' is not served");
      expectError(await post('/v1/embeddings', { input: 'x', model: 'ghost/embed' }), 404, 'model_not_found', "model 'ghost/embed'");
      expect(openai.server.requests).toHaveLength(0);
    });
  });
});

describe('configuration switches', () => {
  it('rejects every /v1 call when no API token is configured (secure default)', async () => {
    const app = await apps.build(BASE_YAML, { API_TOKEN: '' });
    const response = await app.inject({ method: 'GET', url: '/v1/version', headers: { authorization: 'Bearer ' } });
    expect(response.statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/v1/version', headers: auth })).statusCode).toBe(401);
  });

  it('api.auth: none opens the API for local development', async () => {
    const app = await apps.build(`${BASE_YAML}api: { auth: none }\n`, { API_TOKEN: '' });
    expect((await app.inject({ method: 'GET', url: '/v1/version' })).statusCode).toBe(200);
  });

  it('mounts every route under base_path', async () => {
    const app = await apps.build(`${BASE_YAML}server: { base_path: /gateway }\n`);
    const mounted = await app.inject({ method: 'GET', url: '/gateway/v1/version', headers: auth });
    expect(mounted.statusCode).toBe(200);
    expect(mounted.json().api_version).toBe('1');
    expect((await app.inject({ method: 'GET', url: '/v1/version', headers: auth })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/gateway/readyz' })).statusCode).toBe(200);
  });

  it('/readyz is 503 when no provider is ready, and caches health between probes', async () => {
    const closed = await startEmulator();
    const url = closed.url;
    await closed.close();
    const app = await apps.build('version: 1\nai: { retry_attempts: 0, health_cache_ttl: 60 }\n', {
      OPENAI_URL: url,
      DEEPSEEK_API_KEY: '',
    });
    const first = await app.inject({ method: 'GET', url: '/readyz' });
    expect(first.statusCode).toBe(503);
    expect(first.json()).toEqual({ status: 'not_ready', checks: { providers: 'failing' } });

    const ready = await apps.build('version: 1\nai: { health_cache_ttl: 60 }\n', { DEEPSEEK_API_KEY: '' });
    for (let i = 0; i < 3; i++) expect((await ready.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect(openai.server.requestsTo('/v1/models')).toHaveLength(1);
  });

  describe('with the AuthModule configured (JWT_SECRET)', () => {
    const secret = 's'.repeat(48);
    const jwt = () => {
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const head = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ user_id: 'u-1', exp: Math.floor(Date.now() / 1000) + 300 })}`;
      return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
    };

    it('api.auth token (default): /v1 answers to the API token, not to the JWT guard', async () => {
      const app = await apps.build(BASE_YAML, { JWT_SECRET: secret });
      expect((await app.inject({ method: 'GET', url: '/v1/version', headers: auth })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/v1/version', headers: { authorization: `Bearer ${jwt()}` } })).statusCode).toBe(401);
    });

    it('api.auth jwt: /v1 is protected by the AuthModule guard', async () => {
      const app = await apps.build(`${BASE_YAML}api: { auth: jwt }\n`, { JWT_SECRET: secret });
      const withApiToken = await app.inject({ method: 'GET', url: '/v1/version', headers: auth });
      expect(withApiToken.statusCode).toBe(401);
      expect(withApiToken.json()).toMatchObject({ error: 'Authentication required', status: 401 });
      expect((await app.inject({ method: 'GET', url: '/v1/version', headers: { authorization: `Bearer ${jwt()}` } })).statusCode).toBe(200);
    });
  });
});
