/**
 * The search tools against loopback SearXNG and SearchApi emulators speaking their real wire formats:
 * request parameters, normalization, limits, error mapping (no upstream text or key in messages), response
 * bounds, timeouts, capability-group fallback, the SSRF guard, and searchAndGenerate through a real AiClient.
 */
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { toClientOptions } from '../src/ai/ai.module';
import { AiClient } from '../src/ai/client/ai-client';
import { ProviderRegistry } from '../src/ai/client/provider-registry';
import {
  AuthenticationError,
  ConnectionError,
  InvalidRequestError,
  InvalidResponseError,
  ProviderError,
  RateLimitError,
  TimeoutError,
  TollgateError,
} from '../src/ai/errors';
import { SearchService } from '../src/ai/tools/search.service';
import { SearchApiTool } from '../src/ai/tools/searchapi.tool';
import { SearxngTool } from '../src/ai/tools/searxng.tool';
import type { SearchTool } from '../src/ai/tools/search-tool.interface';
import { ToolNotConfiguredError } from '../src/ai/tools/tool-errors';
import { ToolRegistry } from '../src/ai/tools/tool-registry';
import { isNonPublicAddress } from '../src/ai/tools/tool-url-guard';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { SearchApiEmulator } from './emulators/searchapi-emulator';
import { SEARCH_UPSTREAM_MARKER, SearxngEmulator } from './emulators/searxng-emulator';

const SEARCH_KEY = 'searchapi-test-KEY-0193';
const AI_KEY = 'sk-search-test-KEY-4410';

let searxng: SearxngEmulator;
let searchapi: SearchApiEmulator;
let openai: OpenAiEmulator;
const tools: SearchTool[] = [];

beforeAll(async () => {
  [searxng, searchapi, openai] = await Promise.all([
    SearxngEmulator.start(),
    SearchApiEmulator.start(SEARCH_KEY),
    OpenAiEmulator.start({ apiKey: AI_KEY }),
  ]);
});

afterAll(async () => {
  await Promise.all(tools.map((tool) => tool.close()));
  await Promise.all([searxng.close(), searchapi.close(), openai.close()]);
});

beforeEach(() => {
  searxng.reset();
  searchapi.reset();
  openai.server.reset();
});

function searxngTool(overrides: Partial<ConstructorParameters<typeof SearxngTool>[0]> = {}): SearxngTool {
  const tool = new SearxngTool({ name: 'web_search', kind: 'searxng', url: searxng.url, allowPrivateNetwork: true, timeoutMs: 2000, ...overrides });
  tools.push(tool);
  return tool;
}

function searchApiTool(overrides: Partial<ConstructorParameters<typeof SearchApiTool>[0]> = {}): SearchApiTool {
  const tool = new SearchApiTool({ name: 'hosted', kind: 'searchapi', url: searchapi.url, apiKey: SEARCH_KEY, allowPrivateNetwork: true, timeoutMs: 2000, ...overrides });
  tools.push(tool);
  return tool;
}

/** Runs `call`, expects it to fail with `type`, and checks the message carries neither upstream text nor keys. */
async function expectFailure(call: Promise<unknown>, type: new (...args: never[]) => TollgateError, says: string | RegExp): Promise<TollgateError> {
  const error = (await call.then(
    () => undefined,
    (failure: unknown) => failure,
  )) as TollgateError;
  expect(error).toBeInstanceOf(type);
  expect(error.message).toMatch(says);
  expect(error.message).not.toContain(SEARCH_UPSTREAM_MARKER);
  expect(error.message).not.toContain(SEARCH_KEY);
  expect(error.message).not.toContain('127.0.0.1');
  return error;
}

describe('SearXNG adapter', () => {
  it('sends q, format=json, language and categories, and normalizes the results', async () => {
    const response = await searxngTool({ language: 'en', categories: ['general', 'news'] }).search('node streams', { limit: 5 });
    const request = searxng.server.lastRequest!;
    expect(request.path).toBe('/search');
    expect(Object.fromEntries(request.query)).toEqual({ q: 'node streams', format: 'json', language: 'en', categories: 'general,news' });
    expect(response.tool).toBe('web_search');
    expect(response.source).toBe('searxng');
    expect(response.query).toBe('node streams');
    // Trimmed to the limit after the URL-less third item was dropped.
    expect(response.results).toHaveLength(5);
    expect(response.results.map((r) => r.title)).toEqual(['Result 1 for node streams', 'Result 2 for node streams', 'Result 4 for node streams', 'Result 5 for node streams', 'Result 6 for node streams']);
    expect(response.results[0]).toEqual({
      title: 'Result 1 for node streams',
      url: 'https://example.org/node%20streams/1',
      snippet: 'Snippet 1 about node streams.',
      source: 'duckduckgo',
    });
  });

  it('drops items without an http(s) URL and falls back to the host as source', async () => {
    searxng.hits = [
      { title: 'no url', snippet: 's', source: 'x' },
      { url: 'javascript:alert(1)', title: 'script', snippet: 's', source: 'x' },
      { url: 'https://docs.example.net/a', title: '', snippet: '', source: '' },
    ];
    const { results } = await searxngTool().search('q', { limit: 5 });
    expect(results).toEqual([{ title: 'https://docs.example.net/a', url: 'https://docs.example.net/a', snippet: '', source: 'docs.example.net' }]);
  });

  it('403 (JSON format disabled) is a provider error that says how to fix it', async () => {
    const closed = await SearxngEmulator.start({ jsonEnabled: false });
    try {
      const tool = new SearxngTool({ name: 'closed', kind: 'searxng', url: closed.url, allowPrivateNetwork: true });
      tools.push(tool);
      await expectFailure(tool.search('q', { limit: 5 }), ProviderError, /format=json \(403\).*search\.formats/);
    } finally {
      await closed.close();
    }
  });

  it('429 from its limiter is a rate-limit error; 5xx a provider error; a non-JSON body an invalid response', async () => {
    const tool = searxngTool();
    searxng.rateLimitNext();
    await expectFailure(tool.search('q', { limit: 5 }), RateLimitError, 'web_search: upstream rate limit reached (429)');
    searxng.server.failNext(502, { body: { error: SEARCH_UPSTREAM_MARKER } });
    await expectFailure(tool.search('q', { limit: 5 }), ProviderError, 'web_search: upstream returned 502');
    searxng.server.malformedNext();
    await expectFailure(tool.search('q', { limit: 5 }), InvalidResponseError, 'malformed JSON');
  });

  it('refuses an answer over the size bound without buffering it', async () => {
    searxng.oversizedNext();
    await expectFailure(searxngTool({ maxResponseBytes: 64 * 1024 }).search('q', { limit: 5 }), InvalidResponseError, 'exceeded 65536 bytes');
  });

  it('times out a slow instance, and a reset connection is a connection error', async () => {
    const tool = searxngTool({ timeoutMs: 150 });
    searxng.server.delayNext(2000);
    const started = Date.now();
    await expectFailure(tool.search('q', { limit: 5 }), TimeoutError, 'did not answer within 150 ms');
    expect(Date.now() - started).toBeLessThan(1500);
    searxng.server.resetNext();
    await expectFailure(tool.search('q', { limit: 5 }), ConnectionError, 'could not reach upstream');
  });
});

describe('SearchApi adapter', () => {
  it('sends the key as a Bearer header and engine, location, hl and gl as parameters', async () => {
    const response = await searchApiTool({ engine: 'google', location: 'Berlin,Germany', hl: 'de', gl: 'de' }).search('wetter', { limit: 3 });
    const request = searchapi.server.lastRequest!;
    expect(request.path).toBe('/api/v1/search');
    expect(request.headers.authorization).toBe(`Bearer ${SEARCH_KEY}`);
    expect(Object.fromEntries(request.query)).toEqual({ engine: 'google', q: 'wetter', location: 'Berlin,Germany', hl: 'de', gl: 'de' });
    expect(response).toMatchObject({ tool: 'hosted', source: 'searchapi', query: 'wetter' });
    expect(response.results).toEqual([
      { title: 'Result 1 for wetter', url: 'https://example.org/wetter/1', snippet: 'Snippet 1 about wetter.', source: 'duckduckgo' },
      { title: 'Result 2 for wetter', url: 'https://example.org/wetter/2', snippet: 'Snippet 2 about wetter.', source: 'brave' },
      { title: 'Result 4 for wetter', url: 'https://example.org/wetter/4', snippet: 'Snippet 4 about wetter.', source: 'brave' },
    ]);
  });

  it('an answer without organic_results is an empty list', async () => {
    searchapi.hits = [];
    expect((await searchApiTool().search('nothing', { limit: 5 })).results).toEqual([]);
  });

  it('a wrong key is an authentication error without the upstream body; 429 a rate limit', async () => {
    await expectFailure(searchApiTool({ apiKey: 'wrong-key' }).search('q', { limit: 5 }), AuthenticationError, 'hosted: upstream rejected the credentials (401)');
    searchapi.rateLimitNext();
    await expectFailure(searchApiTool().search('q', { limit: 5 }), RateLimitError, '(429)');
  });

  it('refuses an oversized answer', async () => {
    searchapi.oversizedNext();
    await expectFailure(searchApiTool({ maxResponseBytes: 100_000 }).search('q', { limit: 5 }), InvalidResponseError, 'exceeded 100000 bytes');
  });
});

describe('capability groups', () => {
  function registry(): ToolRegistry {
    const built = ToolRegistry.fromSettings([
      { name: 'primary', kind: 'searxng', url: searxng.url, allowPrivateNetwork: true, timeoutMs: 300 },
      { name: 'backup', kind: 'searchapi', url: searchapi.url, apiKey: SEARCH_KEY, allowPrivateNetwork: true },
      { name: 'search', kind: 'group', tools: ['primary', 'backup'] },
    ]);
    tools.push(...built.list());
    return built;
  }

  it('the first member answers when it can', async () => {
    const response = await registry().get('search').search('q', { limit: 2 });
    expect(response).toMatchObject({ tool: 'search', source: 'searxng' });
    expect(searchapi.server.requests).toHaveLength(0);
  });

  it.each([
    ['a refused connection', () => searxng.server.resetNext()],
    ['a rate limit', () => searxng.rateLimitNext()],
    ['a timeout', () => searxng.server.delayNext(2000)],
  ])('falls back to the next member on %s', async (_, fault) => {
    fault();
    const response = await registry().get('search').search('q', { limit: 2 });
    expect(response).toMatchObject({ tool: 'search', source: 'searchapi' });
    expect(response.results).toHaveLength(2);
    expect(searxng.server.requests).toHaveLength(1);
    expect(searchapi.server.requests).toHaveLength(1);
  });

  it('does not fall back on a provider error or a bad answer', async () => {
    searxng.server.failNext(500);
    await expectFailure(registry().get('search').search('q', { limit: 2 }), ProviderError, 'primary: upstream returned 500');
    searxng.server.malformedNext();
    await expectFailure(registry().get('search').search('q', { limit: 2 }), InvalidResponseError, 'primary');
    expect(searchapi.server.requests).toHaveLength(0);
  });

  it('does not fall back when the call turns fallback off, and reports the first error when all fail', async () => {
    searxng.rateLimitNext();
    await expectFailure(registry().get('search').search('q', { limit: 2, enableFallback: false }), RateLimitError, 'primary');
    expect(searchapi.server.requests).toHaveLength(0);
    searxng.rateLimitNext();
    searchapi.rateLimitNext();
    await expectFailure(registry().get('search').search('q', { limit: 2 }), RateLimitError, 'primary');
  });

  it('refuses members that are not adapters, and duplicate names', () => {
    expect(() => ToolRegistry.fromSettings([{ name: 'g', kind: 'group', tools: ['missing'] }])).toThrow("tools.g.tools[0]: 'missing' is not a registered searxng or searchapi tool");
    expect(() =>
      ToolRegistry.fromSettings([
        { name: 'a', kind: 'searxng', url: searxng.url, allowPrivateNetwork: true },
        { name: 'a', kind: 'searxng', url: searxng.url, allowPrivateNetwork: true },
      ]),
    ).toThrow("tool 'a' is registered twice");
  });
});

describe('SSRF guard', () => {
  it('refuses a loopback URL unless allow_private_network is set', () => {
    expect(() => new SearxngTool({ name: 'local', kind: 'searxng', url: searxng.url })).toThrow(
      'tools.local.url: points at a loopback, private or link-local address; set allow_private_network: true for a tool you run yourself',
    );
    expect(() => new SearchApiTool({ name: 'h', kind: 'searchapi', url: 'http://user:pw@example.org', apiKey: 'k' })).toThrow('tools.h.url: must not contain credentials');
  });

  it('refuses, at connect time, a host name that resolves to a non-public address', async () => {
    const name = hostname();
    const resolved = await lookup(name).catch(() => undefined);
    if (!resolved || !isNonPublicAddress(resolved.address) || name.toLowerCase().endsWith('localhost')) {
      console.warn(`skipped: this machine's host name (${name}) does not resolve to a non-public address`);
      return;
    }
    const tool = new SearxngTool({ name: 'sneaky', kind: 'searxng', url: `http://${name}:${new URL(searxng.url).port}` });
    tools.push(tool);
    await expectFailure(tool.search('q', { limit: 1 }), ConnectionError, 'sneaky: could not reach upstream (ESSRF_BLOCKED)');
    expect(searxng.server.requests).toHaveLength(0);
  });
});

describe('SearchService', () => {
  let client: AiClient;
  let service: SearchService;

  beforeAll(() => {
    client = new AiClient(
      ProviderRegistry.fromSettings([{ name: 'openai', kind: 'openai', url: openai.url, apiKey: AI_KEY, chatModel: 'gpt-test', timeoutMs: 2000 }]),
      toClientOptions({ providers: [{ name: 'openai', kind: 'openai', timeoutMs: 2000 }], retryAttempts: 0 }),
    );
    service = SearchService.fromOptions(
      { tools: [{ name: 'web_search', kind: 'searxng', url: searxng.url, allowPrivateNetwork: true }], maxLimit: 8, maxQueryChars: 50 },
      client,
    );
  });

  afterAll(async () => {
    await service.close();
    await client.close();
  });

  it('uses web_search by default and the default limit of 5; never calls a provider', async () => {
    const response = await service.search('  typescript  ');
    expect(response.query).toBe('typescript');
    expect(response.results).toHaveLength(5);
    expect(openai.server.requests).toHaveLength(0);
  });

  it('checks query, limit and tool before any upstream call', async () => {
    await expectFailure(service.search(''), InvalidRequestError, 'query must be a non-empty string');
    await expectFailure(service.search('x'.repeat(51)), InvalidRequestError, 'query must be at most 50 characters');
    await expectFailure(service.search('q', { limit: 9 }), InvalidRequestError, 'limit must be an integer from 1 to 8');
    await expectFailure(service.search('q', { limit: 1.5 }), InvalidRequestError, 'limit must be an integer from 1 to 8');
    const unknown = await expectFailure(service.search('q', { tool: 'nope' }), ToolNotConfiguredError, "tool 'nope' is not configured (configured: web_search)");
    expect(unknown.type).toBe('tool_not_configured');
    expect(searxng.server.requests).toHaveLength(0);
  });

  it('without any tool, says how to configure one', async () => {
    const empty = new SearchService(new ToolRegistry(), client);
    await expectFailure(empty.search('q'), ToolNotConfiguredError, 'no search tool is configured (set SEARXNG_URL');
  });

  it('searchAndGenerate sends the results as numbered context items and returns both', async () => {
    const response = await service.searchAndGenerate('what is pgvector', { limit: 2, maxTokens: 50 });
    expect(response.results).toHaveLength(2);
    expect(response.generation).toMatchObject({ provider: 'openai', model: 'gpt-test' });
    expect(typeof response.generation.response).toBe('string');
    const sent = openai.server.requestsTo('/v1/chat/completions')[0].body as { messages: Array<{ role: string; content: string }>; max_completion_tokens: number };
    const user = sent.messages.find((m) => m.role === 'user')!.content;
    expect(user).toContain('[1] title: Result 1 for what is pgvector\nurl: https://example.org/what%20is%20pgvector/1\nsnippet: Snippet 1 about what is pgvector.\nsource: duckduckgo');
    expect(user).toContain('[2] title: Result 2 for what is pgvector');
    expect(user).not.toContain('[3]');
    expect(user).toContain('what is pgvector');
    expect(sent.max_completion_tokens).toBe(50);
  });

  it('a failed search sends nothing to the provider', async () => {
    searxng.server.failNext(503);
    await expectFailure(service.searchAndGenerate('q'), ProviderError, 'web_search: upstream returned 503');
    expect(openai.server.requests).toHaveLength(0);
  });
});
