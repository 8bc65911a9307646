/**
 * AiClient.streamMessages / streamResponse with real adapters against loopback emulators: deltas then one
 * done, retries and fallback only before the first chunk, mid-stream failures as typed errors, and the
 * upstream request ended when the consumer stops or aborts.
 */
import { AiClient, type GenerateStreamEvent } from '../src/ai/client/ai-client';
import type { AiClientOptions } from '../src/ai/client/ai-client.options';
import { ProviderRegistry } from '../src/ai/client/provider-registry';
import { SERVICE_REQUEST_EVENT, type ServiceRequestEvent } from '../src/ai/client/service-request.events';
import { ConnectionError, InvalidRequestError, ProviderError } from '../src/ai/errors';
import type { ProviderSettings } from '../src/ai/providers/ai-provider.interface';
import { DEFAULT_PROMPT_TEMPLATES } from '../src/ai/prompts/prompt-templates';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { collect } from './support/provider-specs';

const KEY = 'sk-stream-test-key';

let primary: OpenAiEmulator;
let backup: OpenAiEmulator;

beforeAll(async () => {
  [primary, backup] = await Promise.all([
    OpenAiEmulator.start({ apiKey: KEY }),
    OpenAiEmulator.start({ flavour: 'compatible', chatModels: ['backup-chat'] }),
  ]);
});

afterAll(async () => {
  await Promise.all([primary.close(), backup.close()]);
});

beforeEach(() => {
  primary.server.reset();
  backup.server.reset();
});

const clients: AiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function harness(overrides: Partial<AiClientOptions> = {}) {
  const settings: ProviderSettings[] = [
    { name: 'openai', kind: 'openai', url: primary.url, apiKey: KEY, chatModel: 'gpt-test', timeoutMs: 2000 },
    { name: 'backup', kind: 'openai_compatible', url: backup.url, chatModel: 'backup-chat', timeoutMs: 2000 },
  ];
  const events: ServiceRequestEvent[] = [];
  const sleeps: number[] = [];
  const client = new AiClient(
    ProviderRegistry.fromSettings(settings),
    {
      defaultProvider: 'openai',
      retry: { retries: 2, baseDelayMs: 100 },
      fallback: { enabled: true },
      prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
      context: { excludedFields: [], sensitiveKeys: [] },
      sensitiveKeys: [],
      limits: { maxBatchInputs: 4 },
      healthCacheMs: 5000,
      ...overrides,
    },
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

const chatCalls = (emulator: OpenAiEmulator) => emulator.server.requests.filter((r) => r.path.endsWith('/chat/completions'));
const deltaText = (events: GenerateStreamEvent[]) => events.map((e) => (e.type === 'delta' ? e.text : '')).join('');

describe('streamMessages', () => {
  it('yields the deltas in order, then one done with provider, model, finish reason and usage', async () => {
    const { client, events } = harness();
    const streamed = await collect(client.streamMessages([{ role: 'user', content: 'three little words' }], { maxTokens: 9 }));
    expect(streamed.filter((e) => e.type === 'delta').length).toBeGreaterThan(1);
    expect(deltaText(streamed)).toBe('echo: three little words');
    expect(streamed.at(-1)).toEqual({
      type: 'done',
      provider: 'openai',
      model: 'gpt-test',
      finishReason: 'stop',
      usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
    });
    expect(streamed.filter((e) => e.type === 'done')).toHaveLength(1);
    expect(primary.server.lastRequest!.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 9,
      messages: [{ role: 'user', content: 'three little words' }],
    });
    expect(events.map((e) => [e.payload.provider, e.payload.operation, e.payload.status])).toEqual([['openai', 'generate', 'success']]);
  });

  it('puts a per-call system prompt first and names a bad message field before any upstream call', async () => {
    const { client } = harness();
    await collect(client.streamMessages([{ role: 'user', content: 'hi' }], { systemPrompt: 'Be brief.' }));
    expect((primary.server.lastRequest!.body as { messages: unknown[] }).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    primary.server.reset();
    await expect(collect(client.streamMessages([]))).rejects.toThrow(new InvalidRequestError('messages must be a non-empty array'));
    const badRole = [{ role: 'function', content: 'x' }] as unknown as Parameters<AiClient['streamMessages']>[0];
    await expect(collect(client.streamMessages(badRole))).rejects.toThrow('messages[0].role must be one of system, user, assistant, tool');
    const badContent = [{ role: 'user', content: 'a' }, { role: 'user', content: 3 }] as unknown as Parameters<AiClient['streamMessages']>[0];
    await expect(collect(client.streamMessages(badContent))).rejects.toThrow('messages[1].content must be a string');
    expect(primary.server.requests).toHaveLength(0);
  });
});

describe('streamResponse', () => {
  it('applies the prompt templates and context like generateResponse', async () => {
    const { client } = harness();
    const streamed = await collect(client.streamResponse('What is the capital?', [{ title: 'France', body: 'Paris' }], {}));
    const sent = primary.server.lastRequest!.body as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages[0]).toEqual({ role: 'system', content: DEFAULT_PROMPT_TEMPLATES.systemPrompt });
    expect(sent.messages[1].content).toContain('title: France\nbody: Paris');
    expect(deltaText(streamed)).toBe(`echo: ${sent.messages[1].content}`);
    await expect(collect(client.streamResponse('  ', [], {}))).rejects.toThrow('prompt must be a non-empty string');
  });
});

describe('retries and fallback before the first chunk', () => {
  it('retries a 429 and reports each attempt before the first delta', async () => {
    const { client, events, sleeps } = harness();
    primary.rateLimitNext('1', 2);
    const streamed = await collect(client.streamMessages([{ role: 'user', content: 'again' }]));
    expect(deltaText(streamed)).toBe('echo: again');
    expect(chatCalls(primary)).toHaveLength(3);
    expect(sleeps).toEqual([1000, 1000]);
    expect(events.map((e) => [e.payload.attempt, e.payload.status])).toEqual([
      [1, 'error'],
      [2, 'error'],
      [3, 'success'],
    ]);
  });

  it('falls back to the next provider on a 5xx and names it in done', async () => {
    const { client } = harness();
    primary.serverErrorNext(503);
    // No model named: fallback may use the next provider's own model (a named one only moves to its aliases).
    const streamed = await collect(client.streamMessages([{ role: 'user', content: 'elsewhere' }]));
    expect(streamed.at(-1)).toMatchObject({ type: 'done', provider: 'backup', model: 'backup-chat' });
    expect((backup.server.lastRequest!.body as { model: string }).model).toBe('backup-chat');
  });

  it('a connection cut after the first chunk ends the stream with ConnectionError: no retry, no fallback', async () => {
    const { client } = harness();
    primary.server.inject({ kind: 'stream', cutAfter: 2 });
    const seen: GenerateStreamEvent[] = [];
    const failure = await (async () => {
      for await (const event of client.streamMessages([{ role: 'user', content: 'one two three four' }])) seen.push(event);
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ConnectionError);
    expect(deltaText(seen)).toBe('echo: ');
    expect(chatCalls(primary)).toHaveLength(1);
    expect(chatCalls(backup)).toHaveLength(0);
  });

  it('a mid-stream error frame is a ProviderError without the upstream text', async () => {
    const { client } = harness();
    primary.midStreamErrorNext();
    const failure = await collect(client.streamMessages([{ role: 'user', content: 'a b c' }])).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as Error).message).toBe('openai: upstream reported an error mid-stream');
    expect(chatCalls(backup)).toHaveLength(0);
  });
});

describe('ending the upstream request', () => {
  it('stopping the iteration closes the upstream connection at once', async () => {
    const { client } = harness();
    primary.server.inject({ kind: 'stream', chunkDelayMs: 1500 });
    let stoppedAt = 0;
    for await (const event of client.streamMessages([{ role: 'user', content: 'many slow words here' }])) {
      expect(event.type).toBe('delta');
      stoppedAt = Date.now();
      break;
    }
    await primary.server.waitForAbort();
    // Seen by the emulator well before its next chunk was due.
    expect(Date.now() - stoppedAt).toBeLessThan(750);
    expect(primary.server.lastRequest!.aborted).toBe(true);
  });

  it('the caller signal aborts a stream in flight', async () => {
    const { client } = harness();
    primary.server.inject({ kind: 'stream', chunkDelayMs: 1500 });
    const controller = new AbortController();
    const reason = new Error('client went away');
    const seen: GenerateStreamEvent[] = [];
    let abortedAt = 0;
    const failure = await (async () => {
      for await (const event of client.streamMessages([{ role: 'user', content: 'many slow words here' }], { signal: controller.signal })) {
        seen.push(event);
        abortedAt = Date.now();
        controller.abort(reason);
      }
    })().catch((e: unknown) => e);
    expect(failure).toBe(reason);
    expect(seen).toHaveLength(1);
    // Well before the next chunk would have come.
    expect(Date.now() - abortedAt).toBeLessThan(750);
    await primary.server.waitForAbort();
    expect(chatCalls(backup)).toHaveLength(0);
  });
});
