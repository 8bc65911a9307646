/**
 * POST /v1/search, POST /v1/search/generate and the `documents` field of POST /v1/generate on the real
 * application (AppModule on Fastify from a loaded configuration), against loopback SearXNG, SearchApi
 * and OpenAI emulators: success shapes, bounds, error envelopes, fallback and opt-in generation.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OpenAiEmulator, UPSTREAM_MARKER } from './emulators/openai-emulator';
import { SearchApiEmulator } from './emulators/searchapi-emulator';
import { SEARCH_UPSTREAM_MARKER, SearxngEmulator } from './emulators/searxng-emulator';
import { TestApps } from './support/test-apps';

const AI_KEY = 'sk-search-rest-KEY-3301';
const SEARCH_KEY = 'searchapi-rest-KEY-7720';
const TOKEN = 'api-token-for-search-tests';
const auth = { authorization: `Bearer ${TOKEN}` };

let searxng: SearxngEmulator;
let searchapi: SearchApiEmulator;
let openai: OpenAiEmulator;
let apps: TestApps;

beforeAll(async () => {
  [searxng, searchapi, openai] = await Promise.all([SearxngEmulator.start(), SearchApiEmulator.start(SEARCH_KEY), OpenAiEmulator.start({ apiKey: AI_KEY })]);
  apps = new TestApps('tollgate-search-rest-', { OPENAI_API_KEY: AI_KEY, OPENAI_URL: openai.url, OPENAI_CHAT_MODEL: 'gpt-test', API_TOKEN: TOKEN, SEARCHAPI_API_KEY: SEARCH_KEY });
});

afterAll(async () => {
  await apps.close();
  await Promise.all([searxng.close(), searchapi.close(), openai.close()]);
});

beforeEach(() => {
  searxng.reset();
  searchapi.reset();
  openai.server.reset();
});

function post(app: NestFastifyApplication, url: string, body: unknown, headers: Record<string, string> = auth) {
  return app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
}

function expectError(response: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number, type: string, says?: string) {
  expect(response.statusCode).toBe(status);
  const body = JSON.parse(response.body);
  expect(body).toEqual({ error: { type, message: expect.any(String) }, request_id: response.headers['x-request-id'] });
  if (says) expect(body.error.message).toContain(says);
  for (const secret of [SEARCH_UPSTREAM_MARKER, UPSTREAM_MARKER, SEARCH_KEY, AI_KEY, '127.0.0.1']) expect(response.body).not.toContain(secret);
}

describe('with tools configured', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    const yaml = [
      'version: 1',
      'ai: { retry_attempts: 0 }',
      'providers:',
      '  openai: { timeout: 1 }',
      'search: { timeout: 0.3, max_query_chars: 100 }',
      'documents: { max_documents: 3, max_bytes: 400 }',
      'tools:',
      '  hosted: { kind: searchapi, api_key_env: SEARCHAPI_API_KEY, url: "${SEARCHAPI_URL}", allow_private_network: true }',
      '  both: { kind: group, tools: [web_search, hosted] }',
      '',
    ].join('\n');
    app = await apps.build(yaml, { SEARXNG_URL: searxng.url, SEARXNG_ALLOW_PRIVATE_NETWORK: 'true', SEARCHAPI_URL: searchapi.url });
  });

  describe('POST /v1/search', () => {
    it('200 with normalized results from web_search (registered by SEARXNG_URL), no AI call', async () => {
      const response = await post(app, '/v1/search', { query: 'fastify plugins' });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ tool: 'web_search', source: 'searxng', query: 'fastify plugins', count: 5, request_id: response.headers['x-request-id'] });
      expect(body.results).toHaveLength(5);
      expect(body.results[0]).toEqual({ title: 'Result 1 for fastify plugins', url: 'https://example.org/fastify%20plugins/1', snippet: 'Snippet 1 about fastify plugins.', source: 'duckduckgo' });
      expect(openai.server.requests).toHaveLength(0);
    });

    it('honours tool and limit', async () => {
      const response = await post(app, '/v1/search', { query: 'q', tool: 'hosted', limit: 2 });
      expect(response.json()).toMatchObject({ tool: 'hosted', source: 'searchapi', count: 2 });
      expect(searchapi.server.requests).toHaveLength(1);
      expect(searxng.server.requests).toHaveLength(0);
    });

    it('a group falls back on a rate limit, unless fallback is false', async () => {
      searxng.rateLimitNext();
      const response = await post(app, '/v1/search', { query: 'q', tool: 'both' });
      expect(response.json()).toMatchObject({ tool: 'both', source: 'searchapi' });
      searxng.rateLimitNext();
      expectError(await post(app, '/v1/search', { query: 'q', tool: 'both', fallback: false }), 429, 'rate_limited', 'web_search: upstream rate limit reached');
    });

    it('400 naming the field for bad bodies, before any upstream call', async () => {
      expectError(await post(app, '/v1/search', {}), 400, 'invalid_request', 'query must be a string');
      expectError(await post(app, '/v1/search', { query: 'q', limit: 0 }), 400, 'invalid_request', 'limit must not be less than 1');
      expectError(await post(app, '/v1/search', { query: 'q', limit: 21 }), 400, 'invalid_request', 'limit must be an integer from 1 to 20');
      expectError(await post(app, '/v1/search', { query: 'x'.repeat(101) }), 400, 'invalid_request', 'query must be at most 100 characters');
      expectError(await post(app, '/v1/search', { query: '   ' }), 400, 'invalid_request', 'query must be a non-empty string');
      expectError(await post(app, '/v1/search', { query: 'q', extra: 1 }), 400, 'invalid_request', 'unknown field "extra"');
      expectError(await post(app, '/v1/search', { query: 'q', tool: 'bad name' }), 400, 'invalid_request', 'tool must be a tool name');
      expect(searxng.server.requests).toHaveLength(0);
    });

    it('400 tool_not_configured for an unknown tool', async () => {
      expectError(await post(app, '/v1/search', { query: 'q', tool: 'bing' }), 400, 'tool_not_configured', "tool 'bing' is not configured (configured: hosted, web_search, both)");
    });

    it('maps tool failures: 429, 502, 504, 503, oversized 502; never the upstream body', async () => {
      searxng.rateLimitNext();
      expectError(await post(app, '/v1/search', { query: 'q' }), 429, 'rate_limited');
      searxng.server.failNext(500, { body: { error: SEARCH_UPSTREAM_MARKER } });
      expectError(await post(app, '/v1/search', { query: 'q' }), 502, 'provider_error', 'web_search: upstream returned 500');
      searxng.server.delayNext(2000);
      expectError(await post(app, '/v1/search', { query: 'q' }), 504, 'timeout');
      searxng.server.resetNext();
      expectError(await post(app, '/v1/search', { query: 'q' }), 503, 'connection_error');
      searxng.oversizedNext();
      expectError(await post(app, '/v1/search', { query: 'q' }), 502, 'invalid_provider_response', 'exceeded 1048576 bytes');
    });

    it('401 without the API token', async () => {
      expectError(await post(app, '/v1/search', { query: 'q' }, {}), 401, 'authentication_required');
      expect(searxng.server.requests).toHaveLength(0);
    });
  });

  describe('POST /v1/search/generate', () => {
    it('200 with the results and the generated answer, the results sent as context', async () => {
      const response = await post(app, '/v1/search/generate', { query: 'what is fastify', limit: 2, max_tokens: 40, temperature: 0.2 });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ tool: 'web_search', source: 'searxng', query: 'what is fastify', count: 2, provider: 'openai', model: 'gpt-test' });
      expect(typeof body.response).toBe('string');
      expect(body.results).toHaveLength(2);
      const sent = openai.server.requestsTo('/v1/chat/completions')[0].body as { messages: Array<{ role: string; content: string }>; temperature: number };
      const user = sent.messages.find((m) => m.role === 'user')!.content;
      expect(user).toContain('[2] title: Result 2 for what is fastify');
      expect(sent.temperature).toBe(0.2);
    });

    it('400 unknown_provider before the search tool is called', async () => {
      expectError(await post(app, '/v1/search/generate', { query: 'q', provider: 'nope' }), 400, 'unknown_provider', "unknown provider 'nope'");
      expect(searxng.server.requests).toHaveLength(0);
    });

    it('a provider failure is mapped like /v1/generate; fallback false keeps to one provider', async () => {
      openai.serverErrorNext(503);
      expectError(await post(app, '/v1/search/generate', { query: 'q', fallback: false }), 502, 'provider_error');
      expect(searxng.server.requests).toHaveLength(1);
    });
  });

  describe('POST /v1/generate with documents', () => {
    it('renders documents after the context items', async () => {
      const response = await post(app, '/v1/generate', { prompt: 'summarize', context: ['ctx first'], documents: [{ title: 'Doc A', body: 'alpha' }, 'plain doc'] });
      expect(response.statusCode).toBe(200);
      const sent = openai.server.lastRequest!.body as { messages: Array<{ role: string; content: string }> };
      const user = sent.messages.find((m) => m.role === 'user')!.content;
      expect(user).toContain('[1] ctx first\n\n[2] title: Doc A\nbody: alpha\n\n[3] plain doc');
    });

    it('400 for too many documents, too many bytes, or a document that is neither object nor string', async () => {
      expectError(await post(app, '/v1/generate', { prompt: 'p', documents: ['a', 'b', 'c', 'd'] }), 400, 'invalid_request', 'documents: holds 4 documents, more than the limit of 3');
      expectError(await post(app, '/v1/generate', { prompt: 'p', documents: [{ t: 'x'.repeat(500) }] }), 400, 'invalid_request', 'more than the 400-byte limit');
      expectError(await post(app, '/v1/generate', { prompt: 'p', documents: [{ a: 1 }, 5] }), 400, 'invalid_request', 'documents[1]: must be an object or a string');
      expectError(await post(app, '/v1/generate', { prompt: 'p', documents: 'text' }), 400, 'invalid_request', 'documents must be an array');
      expect(openai.server.requests).toHaveLength(0);
    });
  });
});

it('without any tool, /v1/search is 400 tool_not_configured and says how to add one', async () => {
  const app = await apps.build('version: 1\nproviders:\n  openai: {}\n');
  const response = await post(app, '/v1/search', { query: 'q' });
  expectError(response, 400, 'tool_not_configured', 'no search tool is configured (set SEARXNG_URL');
});

