/**
 * AiClient's model-call sink against real adapters and the provider emulators: one record per attempt that
 * reached a model, usage as the upstream reported it (streams included), estimates marked, streams stopped
 * early recorded as aborted, and the caller's call context visible to the sink even after a disconnect.
 */
import { AiClient } from '../src/ai/client/ai-client';
import { ProviderRegistry } from '../src/ai/client/provider-registry';
import type { ModelCallRecord } from '../src/ai/client/model-call';
import { ProviderError } from '../src/ai/errors';
import type { ProviderSettings } from '../src/ai/providers/ai-provider.interface';
import { DEFAULT_PROMPT_TEMPLATES } from '../src/ai/prompts/prompt-templates';
import { type CallContext, currentCallContext, runWithCallContext } from '../src/governance/call-context';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import { GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { collect } from './support/provider-specs';

const KEY = 'sk-ledger-records-key';
let openai: OpenAiEmulator;
let anthropic: AnthropicEmulator;
let gemini: GeminiEmulator;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([
    OpenAiEmulator.start({ apiKey: KEY }),
    startAnthropicEmulator(),
    startGeminiEmulator(),
  ]);
});

afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
});

const clients: AiClient[] = [];
beforeEach(() => openai.server.reset());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

const identity = { tenant: 't-1', subTenant: null, subject: 'u-1', subjectKind: 'user' as const, roles: [] };

function harness(retries = 0) {
  const settings: ProviderSettings[] = [
    { name: 'openai', kind: 'openai', url: openai.url, apiKey: KEY, chatModel: 'gpt-test', embeddingModel: 'embed-test', timeoutMs: 5000 },
    { name: 'claude', kind: 'anthropic', url: anthropic.url, apiKey: ANTHROPIC_EMULATOR_KEY, timeoutMs: 5000 },
    { name: 'gemini', kind: 'gemini', url: gemini.url, apiKey: GEMINI_EMULATOR_KEY, timeoutMs: 5000 },
  ];
  const client = new AiClient(
    ProviderRegistry.fromSettings(settings),
    {
      defaultProvider: 'openai',
      retry: { retries, baseDelayMs: 1 },
      fallback: { enabled: false },
      prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
      context: { excludedFields: [], sensitiveKeys: [] },
      sensitiveKeys: [],
      limits: { maxBatchInputs: 8 },
      healthCacheMs: 5000,
    },
    undefined,
    { sleep: async () => undefined },
  );
  clients.push(client);
  const records: Array<ModelCallRecord & { context?: CallContext }> = [];
  client.setModelCallSink((record) => records.push({ ...record, context: currentCallContext() }));
  return { client, records };
}

describe('model-call records', () => {
  it('records a generation with the usage the upstream reported', async () => {
    const { client, records } = harness();
    await runWithCallContext({ identity, requestId: 'r-1', route: '/v1/generate' }, () =>
      client.generateMessages([{ role: 'user', content: 'three little words' }]),
    );
    expect(records).toEqual([
      {
        provider: 'openai',
        providerKind: 'openai',
        model: 'gpt-test',
        operation: 'generate',
        status: 'ok',
        usage: { inputTokens: 7, outputTokens: 3, cachedTokens: 0 },
        estimated: false,
        context: { identity, requestId: 'r-1', route: '/v1/generate' },
      },
    ]);
  });

  it('records a whole stream with the usage chunk it asked for', async () => {
    const { client, records } = harness();
    await collect(client.streamMessages([{ role: 'user', content: 'three little words' }]));
    expect(openai.server.lastRequest!.body).toMatchObject({ stream_options: { include_usage: true } });
    expect(records).toEqual([expect.objectContaining({ operation: 'stream', status: 'ok', usage: { inputTokens: 7, outputTokens: 3, cachedTokens: 0 }, estimated: false })]);
  });

  it('records Anthropic and Gemini streams from their own usage reports, not estimates', async () => {
    const { client, records } = harness();
    const claude = await collect(client.streamMessages([{ role: 'user', content: 'hello there' }], { provider: 'claude' }));
    const google = await collect(client.streamMessages([{ role: 'user', content: 'hello there' }], { provider: 'gemini' }));
    const reported = [claude.at(-1), google.at(-1)].map((event) => (event?.type === 'done' ? event.usage : undefined));
    expect(records.map((r) => [r.provider, r.status, r.estimated])).toEqual([
      ['claude', 'ok', false],
      ['gemini', 'ok', false],
    ]);
    expect(records.map((r) => [r.usage.inputTokens, r.usage.outputTokens])).toEqual(reported.map((u) => [u?.inputTokens, u?.outputTokens]));
  });

  it('records a stream the consumer stops early as aborted, estimated, in the context of its first read', async () => {
    const { client, records } = harness();
    const iterator = runWithCallContext({ identity, requestId: 'r-2' }, () => {
      const stream = client.streamMessages([{ role: 'user', content: 'a question of forty characters in total' }])[Symbol.asyncIterator]();
      return { stream, first: stream.next() };
    });
    const first = await iterator.first;
    expect(first.done).toBe(false);
    // The disconnect arrives outside the request's context, as a socket close handler would.
    await new Promise<void>((resolve) => setImmediate(() => void iterator.stream.return!(undefined).then(() => resolve())));
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record).toMatchObject({ operation: 'stream', status: 'aborted', estimated: true, model: 'gpt-test', context: { requestId: 'r-2' } });
    expect(record.usage.inputTokens).toBe(Math.ceil('a question of forty characters in total'.length / 4));
    const firstText = first.value?.type === 'delta' ? first.value.text : '';
    expect(record.usage.outputTokens).toBe(Math.ceil(firstText.length / 4));
  });

  it('records each attempt the upstream answered with an error (a retried 429, a 503), without tokens, and the success after it', async () => {
    const { client, records } = harness(1);
    openai.rateLimitNext('0', 1);
    await client.generateMessages([{ role: 'user', content: 'hi' }]);
    expect(records.map((r) => [r.status, r.usage.inputTokens, r.estimated])).toEqual([
      ['error', 0, false],
      ['ok', 7, false],
    ]);
    records.length = 0;
    openai.serverErrorNext(503, 1);
    await expect(client.generateMessages([{ role: 'user', content: 'hi' }])).rejects.toBeInstanceOf(ProviderError);
    expect(records.map((r) => r.status)).toEqual(['error']);
  });

  it('records embeddings with the input tokens the upstream counted', async () => {
    const { client, records } = harness();
    await client.generateEmbeddings(['one', 'two']);
    expect(records).toEqual([expect.objectContaining({ operation: 'embed', status: 'ok', model: 'embed-test', usage: { inputTokens: 2, outputTokens: 0, cachedTokens: 0 }, estimated: false })]);
  });

  it('keeps a call working when the sink throws', async () => {
    const { client } = harness();
    client.setModelCallSink(() => {
      throw new Error('sink failure');
    });
    await expect(client.generateMessages([{ role: 'user', content: 'hi' }])).resolves.toMatchObject({ response: expect.any(String) });
  });
});
