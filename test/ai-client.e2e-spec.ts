/**
 * AiClient with real adapters against loopback emulators: retry counts and waits, fallback order,
 * capability skipping, non-eligible errors, prompt rendering and `service.request` events.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { AiClient } from '../src/ai/client/ai-client';
import type { AiClientOptions } from '../src/ai/client/ai-client.options';
import { ProviderRegistry } from '../src/ai/client/provider-registry';
import {
  SERVICE_REQUEST_CHANNEL,
  SERVICE_REQUEST_EVENT,
  type ServiceRequestEvent,
} from '../src/ai/client/service-request.events';
import {
  AuthenticationError,
  CapabilityNotSupportedError,
  ConnectionError,
  InvalidRequestError,
  ProviderError,
  RateLimitError,
  UnknownProviderError,
} from '../src/ai/errors';
import type { ChatMessage, ProviderSettings } from '../src/ai/providers/ai-provider.interface';
import { DEFAULT_PROMPT_TEMPLATES } from '../src/ai/prompts/prompt-templates';
import { startEmulator } from './emulators/emulator-server';
import { OpenAiEmulator, UPSTREAM_MARKER, vectorFor } from './emulators/openai-emulator';

const KEY = 'sk-client-test-key';

let primary: OpenAiEmulator;
let backup: OpenAiEmulator;
let chatOnly: OpenAiEmulator;
let closedUrl: string;

beforeAll(async () => {
  [primary, backup, chatOnly] = await Promise.all([
    OpenAiEmulator.start({ apiKey: KEY }),
    OpenAiEmulator.start({ flavour: 'compatible', chatModels: ['backup-chat', 'backup-large'], embeddingModels: ['backup-embed'], dimensions: 3 }),
    OpenAiEmulator.start({ flavour: 'deepseek', apiKey: KEY, chatModels: ['deepseek-chat'] }),
  ]);
  const closed = await startEmulator();
  closedUrl = closed.url;
  await closed.close();
});

afterAll(async () => {
  await Promise.all([primary.close(), backup.close(), chatOnly.close()]);
});

beforeEach(() => {
  for (const emulator of [primary, backup, chatOnly]) emulator.server.reset();
});

const settings = (): Record<string, ProviderSettings> => ({
  openai: { name: 'openai', kind: 'openai', url: primary.url, apiKey: KEY, chatModel: 'gpt-test', embeddingModel: 'embed-test', timeoutMs: 2000 },
  deepseek: { name: 'deepseek', kind: 'deepseek', url: chatOnly.url, apiKey: KEY, chatModel: 'deepseek-chat', timeoutMs: 2000 },
  backup: { name: 'backup', kind: 'openai_compatible', url: backup.url, chatModel: 'backup-chat', embeddingModel: 'backup-embed', timeoutMs: 2000 },
  wrongkey: { name: 'wrongkey', kind: 'openai', url: primary.url, apiKey: 'sk-wrong', chatModel: 'gpt-test', embeddingModel: 'embed-test', timeoutMs: 2000 },
  down: { name: 'down', kind: 'openai', url: closedUrl, apiKey: KEY, chatModel: 'gpt-test', embeddingModel: 'embed-test', timeoutMs: 2000 },
});

interface Harness {
  client: AiClient;
  events: ServiceRequestEvent[];
  sleeps: number[];
}

const clients: AiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A client over the named registrations (in that order); sleeps are recorded and skipped. */
function harness(names: string[], overrides: Partial<AiClientOptions> = {}, extra: Record<string, ProviderSettings> = {}): Harness {
  const all = { ...settings(), ...extra };
  const events: ServiceRequestEvent[] = [];
  const sleeps: number[] = [];
  const options: AiClientOptions = {
    defaultProvider: names[0],
    retry: { retries: 3, baseDelayMs: 100 },
    fallback: { enabled: true },
    prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
    context: { excludedFields: ['id'], sensitiveKeys: [] },
    sensitiveKeys: [],
    limits: { maxBatchInputs: 4 },
    healthCacheMs: 5000,
    ...overrides,
  };
  const client = new AiClient(
    ProviderRegistry.fromSettings(names.map((name) => all[name])),
    options,
    { emit: (name, event) => name === SERVICE_REQUEST_EVENT && events.push(event) },
    {
      random: () => 0,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    },
  );
  clients.push(client);
  return { client, events, sleeps };
}

/** Drains a stream; its failure is the returned promise's. */
async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

const chatCalls = (emulator: OpenAiEmulator) => emulator.server.requests.filter((r) => r.path.endsWith('/chat/completions'));

describe('generateResponse', () => {
  it('renders system prompt and context into the messages and names the provider that answered', async () => {
    const { client } = harness(['openai']);
    const result = await client.generateResponse('What is the capital?', [{ id: 7, title: 'France', body: 'Paris', api_key: 'sk-x' }, 'plain note'], {
      maxTokens: 20,
      temperature: 0.2,
    });
    expect(result).toMatchObject({ provider: 'openai', model: 'gpt-test', finishReason: 'stop' });
    expect(result.response).toContain('Question: What is the capital?');
    const sent = primary.server.lastRequest!.body as { messages: Array<{ role: string; content: string }>; max_completion_tokens: number; temperature: number };
    expect(sent.messages[0]).toEqual({ role: 'system', content: DEFAULT_PROMPT_TEMPLATES.systemPrompt });
    expect(sent.messages[1].content).toContain('[1] title: France\nbody: Paris\n\n[2] plain note');
    // Excluded fields and sensitive keys never reach the model.
    expect(sent.messages[1].content).not.toMatch(/id: 7|sk-x|api_key/);
    expect(sent).toMatchObject({ max_completion_tokens: 20, temperature: 0.2 });
  });

  it('uses the no-context template, per-provider templates and a per-call system prompt', async () => {
    const { client } = harness(['openai'], {
      prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: { openai: { withoutContext: 'Q: {prompt} {context}' } } },
    });
    await client.generateResponse('hi {context}', [], { systemPrompt: 'Be terse.' });
    const sent = primary.server.lastRequest!.body as { messages: Array<{ role: string; content: string }> };
    // The placeholder inside the prompt is not expanded again.
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'Q: hi {context} ' },
    ]);
  });

  it('rejects an empty prompt and an unknown provider before any upstream call', async () => {
    const { client } = harness(['openai']);
    await expect(client.generateResponse('  ')).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(client.generateResponse('hi', [], { provider: 'nope' })).rejects.toBeInstanceOf(UnknownProviderError);
    expect(primary.server.requests).toHaveLength(0);
  });
});

describe('retries', () => {
  it('retries a 429 after the Retry-After wait and reports each attempt as an event', async () => {
    const { client, events, sleeps } = harness(['openai']);
    primary.rateLimitNext('2', 2);
    const result = await client.generateResponse('hello');
    expect(result.provider).toBe('openai');
    expect(chatCalls(primary)).toHaveLength(3);
    expect(sleeps).toEqual([2000, 2000]);
    expect(events.map((e) => [e.payload.attempt, e.payload.status, e.payload.errorType])).toEqual([
      [1, 'error', 'rate_limited'],
      [2, 'error', 'rate_limited'],
      [3, 'success', undefined],
    ]);
  });

  it('makes retry_attempts + 1 calls with exponential backoff, then reports the last error', async () => {
    const { client, sleeps } = harness(['openai'], { fallback: { enabled: false } });
    primary.server.resetNext(10);
    await expect(client.generateResponse('hello')).rejects.toBeInstanceOf(ConnectionError);
    expect(chatCalls(primary)).toHaveLength(4);
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it('does not retry provider 5xx, authentication or a Retry-After beyond 30 s', async () => {
    const { client } = harness(['openai'], { fallback: { enabled: false } });
    primary.serverErrorNext(503);
    await expect(client.generateResponse('a')).rejects.toBeInstanceOf(ProviderError);
    primary.rateLimitNext('31');
    const limited = await client.generateResponse('b').catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfterMs).toBe(31_000);
    expect(chatCalls(primary)).toHaveLength(2);

    const wrong = harness(['wrongkey'], { fallback: { enabled: false } });
    const error = await wrong.client.generateResponse('c').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).not.toContain(UPSTREAM_MARKER);
    expect(chatCalls(primary)).toHaveLength(3);
  });
});

describe('fallback', () => {
  it('moves to the next registered provider after retries are exhausted on a connection failure', async () => {
    const { client, events } = harness(['down', 'openai']);
    const result = await client.generateResponse('hello');
    expect(result.provider).toBe('openai');
    expect(events.map((e) => `${e.payload.provider}:${e.payload.status}`)).toEqual([
      'down:error', 'down:error', 'down:error', 'down:error', 'openai:success',
    ]);
  });

  it('a call naming no model falls back on provider 5xx in registration order, to the fallback provider\'s own model', async () => {
    const { client } = harness(['openai', 'backup']);
    primary.serverErrorNext(502);
    const result = await client.generateResponse('hello');
    expect(result).toMatchObject({ provider: 'backup', model: 'backup-chat' });
    expect((backup.server.lastRequest!.body as { model: string }).model).toBe('backup-chat');
  });

  it('a call naming a model falls back only to its configured equivalents, with their models', async () => {
    const aliased = harness(['openai', 'backup'], { modelAliases: { smart: ['openai/gpt-test', 'backup/backup-large'] } }).client;
    primary.serverErrorNext(502);
    const result = await aliased.generateResponse('hello', [], { model: 'gpt-test' });
    expect(result).toMatchObject({ provider: 'backup', model: 'backup-large' });
    expect((backup.server.lastRequest!.body as { model: string }).model).toBe('backup-large');
    const plain = harness(['openai', 'backup']).client;
    primary.serverErrorNext(502);
    await expect(plain.generateResponse('hello', [], { model: 'gpt-test' })).rejects.toMatchObject({ type: 'provider_error' });
    expect(chatCalls(backup)).toHaveLength(1);
  });

  it('a model no provider serves is model_not_found before any upstream call', async () => {
    const { client } = harness(['openai', 'backup']);
    await expect(client.generateResponse('hello', [], { model: 'gpt-unknown' })).rejects.toMatchObject({ type: 'model_not_found' });
    await expect(client.generateEmbedding('x', { model: 'nosuchprovider/embed' })).rejects.toMatchObject({ type: 'model_not_found' });
    expect(primary.server.requests).toHaveLength(0);
    expect(backup.server.requests).toHaveLength(0);
  });

  it('follows fallback_providers when set, and a candidate\'s non-eligible error moves on to the next', async () => {
    const { client } = harness(['openai', 'backup', 'wrongkey'], { fallback: { enabled: true, providers: ['wrongkey', 'backup'] } });
    primary.serverErrorNext(503);
    const result = await client.generateResponse('hello');
    expect(result.provider).toBe('backup');
    // openai (503), then wrongkey (401 on the same emulator), then backup.
    expect(chatCalls(primary).map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, 'Bearer sk-wrong']);
  });

  it('skips candidates without the capability (embeddings on a chat-only provider)', async () => {
    const { client } = harness(['openai', 'deepseek', 'backup']);
    primary.serverErrorNext(503);
    const result = await client.generateEmbedding('vector me');
    expect(result).toEqual({ embedding: vectorFor('vector me', 3), provider: 'backup', model: 'backup-embed', dimensions: 3 });
    expect(chatOnly.server.requests).toHaveLength(0);
  });

  it('does not fall back on a non-eligible error, nor when the call disables fallback', async () => {
    const wrong = harness(['wrongkey', 'backup']);
    await expect(wrong.client.generateResponse('a')).rejects.toBeInstanceOf(AuthenticationError);

    const { client } = harness(['openai', 'backup']);
    primary.serverErrorNext(503);
    await expect(client.generateResponse('b', [], { enableFallback: false })).rejects.toBeInstanceOf(ProviderError);
    expect(backup.server.requests).toHaveLength(0);
  });

  it('reports the requested provider\'s error when every candidate fails', async () => {
    const { client } = harness(['openai', 'down']);
    primary.serverErrorNext(500);
    const error = await client.generateResponse('a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).provider).toBe('openai');
  });

  it('refuses embeddings on a generation-only provider instead of silently using another', async () => {
    const { client } = harness(['deepseek', 'backup']);
    await expect(client.generateEmbedding('x')).rejects.toBeInstanceOf(CapabilityNotSupportedError);
    expect(backup.server.requests).toHaveLength(0);
  });
});

describe('features a provider lacks (tools, structured output, images)', () => {
  const user = (content: ChatMessage['content']) => [{ role: 'user', content } as ChatMessage];
  const image: ChatMessage[] = [
    { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: { kind: 'url', url: 'https://example.com/a.png' } }] },
  ];

  // Refused before any call, so the legacy model's URL may be one nothing listens on.
  const legacyClaude = (): ProviderSettings => ({ name: 'legacy', kind: 'anthropic', url: closedUrl, apiKey: KEY, chatModel: 'claude-2.1', timeoutMs: 2000 });

  it.each([
    ['tools', 'legacy', user('Weather?'), { tools: [{ name: 'weather', parameters: { type: 'object' } }] }, /legacy: anthropic model claude-2.1 does not support tool calling/],
    ['a tool choice', 'legacy', user('Weather?'), { toolChoice: 'required' as const }, /does not support tool calling/],
    [
      'a tool result turn',
      'legacy',
      [
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'weather', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'c1', content: 'sunny' },
      ] as ChatMessage[],
      {},
      /does not support tool calling/,
    ],
    [
      'a JSON schema',
      'deepseek',
      user('Name?'),
      { responseFormat: { type: 'json_schema' as const, name: 'n', schema: { type: 'object' } } },
      /deepseek: deepseek does not support response_format json_schema/,
    ],
    ['an image', 'deepseek', image, {}, /deepseek: deepseek model deepseek-chat does not support image input/],
  ])('refuses %s on a provider without it (%s), naming it, and calls no upstream, fallback or not', async (_, provider, messages, options, named) => {
    const { client } = harness([provider, 'backup'], {}, { legacy: legacyClaude() });
    const refused = client.generateMessages(messages, options);
    await expect(refused).rejects.toBeInstanceOf(CapabilityNotSupportedError);
    await expect(client.generateMessages(messages, options)).rejects.toThrow(named);
    await expect(collect(client.streamMessages(messages, options))).rejects.toThrow(named);
    expect([...chatOnly.server.requests, ...backup.server.requests]).toHaveLength(0);
  });

  it('falls back only to providers with every feature the request needs', async () => {
    const { client } = harness(['down', 'deepseek', 'backup']);
    const answer = await client.generateMessages(image);
    expect(answer.provider).toBe('backup');
    expect(chatOnly.server.requests).toHaveLength(0);
    expect(chatCalls(backup)).toHaveLength(1);
  });

  it('sends a response_format of text like no format', async () => {
    const { client } = harness(['openai']);
    await expect(client.generateMessages(user('Hi'), { responseFormat: { type: 'text' } })).resolves.toMatchObject({ provider: 'openai' });
  });

  it.each([
    [[{ role: 'tool', content: 'x' }], 'messages[0].toolCallId must name the tool call this message answers'],
    [[{ role: 'assistant', content: null }], 'messages[0].content must be a string (null only beside toolCalls)'],
    [[{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: '', arguments: '{}' }] }], 'messages[0].toolCalls[0] must have a non-empty id and name and arguments as JSON text'],
    [[{ role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'file:///etc/passwd' } }] }], 'messages[0].content[0].image.url must be an http(s) URL'],
    [[{ role: 'user', content: [{ type: 'image', image: { kind: 'base64', mediaType: 'text/html', data: 'x' } }] }], 'messages[0].content[0].image.mediaType must be an image/* type'],
    [[{ role: 'user', content: [] }], 'messages[0].content must be a string or a non-empty array of parts'],
    [[{ role: 'developer', content: 'x' }], 'messages[0].role must be one of system, user, assistant, tool'],
  ])('names the field of a malformed message %j', async (messages, message) => {
    const { client } = harness(['openai']);
    await expect(client.generateMessages(messages as ChatMessage[])).rejects.toThrow(new InvalidRequestError(message));
  });
});

describe('embeddings', () => {
  it('sends a batch as one upstream call and keeps the input order', async () => {
    const { client } = harness(['openai']);
    const texts = ['one', 'two', 'three'];
    const result = await client.generateEmbeddings(texts);
    expect(result.embeddings).toEqual(texts.map((t) => vectorFor(t, 4)));
    expect(result).toMatchObject({ provider: 'openai', model: 'embed-test', dimensions: 4 });
    expect(primary.server.requestsTo('/v1/embeddings')).toHaveLength(1);
  });

  it('enforces the batch bound and names the bad input', async () => {
    const { client } = harness(['openai']);
    await expect(client.generateEmbeddings([])).rejects.toThrow('inputs must hold 1 to 4 texts');
    await expect(client.generateEmbeddings(['a', 'b', 'c', 'd', 'e'])).rejects.toThrow('inputs must hold 1 to 4 texts');
    await expect(client.generateEmbeddings(['a', ''])).rejects.toThrow('inputs[1] must be a non-empty string');
    expect(primary.server.requests).toHaveLength(0);
  });
});

describe('events', () => {
  it('publishes start, finish and duration on the Nest emitter and the diagnostics channel alike', async () => {
    const channelEvents: ServiceRequestEvent[] = [];
    const listener = (message: unknown) => channelEvents.push(message as ServiceRequestEvent);
    diagnosticsChannel.subscribe(SERVICE_REQUEST_CHANNEL, listener);
    try {
      const { client, events } = harness(['openai']);
      primary.server.delayNext(50);
      const before = Date.now();
      await client.generateEmbedding('timed');
      const after = Date.now();
      expect(events).toHaveLength(1);
      const [event] = events;
      expect(event.payload).toEqual({ provider: 'openai', operation: 'embed', status: 'success', attempt: 1 });
      expect(event.duration).toBeCloseTo(event.finish - event.start, 6);
      expect(event.duration).toBeGreaterThanOrEqual(45);
      expect(event.start).toBeGreaterThanOrEqual(before - 1);
      expect(event.finish).toBeLessThanOrEqual(after + 1);
      expect(channelEvents).toEqual([event]);
    } finally {
      diagnosticsChannel.unsubscribe(SERVICE_REQUEST_CHANNEL, listener);
    }
  });

  it('a throwing subscriber does not fail the call', async () => {
    const all = settings();
    const client = new AiClient(ProviderRegistry.fromSettings([all.openai]), {
      defaultProvider: 'openai',
      retry: { retries: 0, baseDelayMs: 0 },
      fallback: { enabled: false },
      prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
      context: { excludedFields: [], sensitiveKeys: [] },
      sensitiveKeys: [],
      limits: { maxBatchInputs: 32 },
      healthCacheMs: 0,
    }, { emit: () => { throw new Error('subscriber bug'); } });
    clients.push(client);
    await expect(client.generateResponse('still works')).resolves.toMatchObject({ provider: 'openai' });
  });
});

describe('models, health, capabilities, provider info', () => {
  it('lists models of every provider and reports the ones that failed without failing the call', async () => {
    const { client } = harness(['openai', 'down'], { retry: { retries: 0, baseDelayMs: 0 } });
    const listing = await client.listModels();
    expect(listing.models.map((m) => m.id)).toEqual(['gpt-test', 'embed-test']);
    expect(listing.errors).toEqual([{ provider: 'down', type: 'connection_error', message: expect.stringMatching(/^down: /) }]);
    await expect(client.listModels('down')).rejects.toBeInstanceOf(ConnectionError);
  });

  it('checks health per provider once for reports and readiness alike, while the result is reused', async () => {
    const { client, events } = harness(['openai', 'down']);
    const results = await client.healthCheckAll();
    expect(results.map((r) => [r.provider, r.status, r.reachable, r.ready])).toEqual([
      ['openai', 'healthy', true, true],
      ['down', 'unavailable', false, false],
    ]);
    await Promise.all([client.cachedHealth(), client.healthCheck('openai'), client.healthCheckAll()]);
    expect(primary.server.requestsTo('/v1/models')).toHaveLength(1);
    expect(events.filter((e) => e.payload.operation === 'health')).toHaveLength(2);
  });

  it('reports capabilities truthfully and never shows keys', () => {
    const { client } = harness(['openai', 'deepseek'], { sensitiveKeys: ['url'] });
    expect(client.capabilities()).toEqual([
      expect.objectContaining({ provider: 'openai', kind: 'openai', capabilities: expect.objectContaining({ embeddings: true }) }),
      expect.objectContaining({ provider: 'deepseek', capabilities: expect.objectContaining({ embeddings: false, generate: true }) }),
    ]);
    const described = client.describeProviders();
    expect(JSON.stringify(described)).not.toContain(KEY);
    // A configured sensitive key is removed too.
    expect(described[0]).not.toHaveProperty('url');
    expect(described.map((d) => d.default)).toEqual([true, false]);
  });
});
