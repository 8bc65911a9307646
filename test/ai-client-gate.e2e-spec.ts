/**
 * What AiClient tells its call gate (docs/governance.md#reserve-then-settle), against real adapters and the
 * provider emulators: whether a request of the call went upstream (every adapter reports it through the
 * upstream exchange), which attempts went out and got no answer (a timeout, the caller leaving, a stream cut
 * before its first chunk), what answered, and that the max_tokens a gate bounds a call to is what the upstream
 * is sent.
 */
import { AiClient } from '../src/ai/client/ai-client';
import type { GatedCall, GateOutcome, GateTicket, ModelCallGate } from '../src/ai/client/model-call-gate';
import { ProviderRegistry } from '../src/ai/client/provider-registry';
import type { ProviderSettings } from '../src/ai/providers/ai-provider.interface';
import { DEFAULT_PROMPT_TEMPLATES } from '../src/ai/prompts/prompt-templates';
import type { ModelCallRecord } from '../src/ai/client/model-call';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import { BEDROCK_API_KEY, BEDROCK_REGION, BedrockEmulator } from './emulators/bedrock-emulator';
import { startEmulator } from './emulators/emulator-server';
import { GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { VERTEX_LOCATION, VERTEX_PROJECT, VertexEmulator } from './emulators/vertex-emulator';
import { collect } from './support/provider-specs';

const KEY = 'sk-gate-outcomes-key';
let openai: OpenAiEmulator;
let backup: OpenAiEmulator;
let anthropic: AnthropicEmulator;
let gemini: GeminiEmulator;
let ollama: OllamaEmulator;
let bedrock: BedrockEmulator;
let vertex: VertexEmulator;
const VERTEX_TOKEN = 'ya29.gate-outcomes-token';
let closedUrl: string;

beforeAll(async () => {
  [openai, backup, anthropic, gemini, ollama, bedrock, vertex] = await Promise.all([
    OpenAiEmulator.start({ apiKey: KEY }),
    OpenAiEmulator.start({ flavour: 'compatible', chatModels: ['backup-chat'], embeddingModels: ['backup-embed'] }),
    startAnthropicEmulator(),
    startGeminiEmulator(),
    startOllamaEmulator(),
    BedrockEmulator.start(),
    VertexEmulator.start({ staticTokens: [VERTEX_TOKEN] }),
  ]);
  const closed = await startEmulator();
  closedUrl = closed.url;
  await closed.close();
});

afterAll(async () => {
  await Promise.all([openai.close(), backup.close(), anthropic.close(), gemini.close(), ollama.close(), bedrock.close(), vertex.close()]);
});

const clients: AiClient[] = [];
beforeEach(() => {
  for (const emulator of [openai, backup]) emulator.server.reset();
  for (const emulator of [anthropic, gemini, ollama, bedrock, vertex]) emulator.server.reset();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A gate that admits every call, bounds none unless told to, and keeps what each ticket was closed with. */
class RecordingGate implements ModelCallGate {
  readonly outcomes: GateOutcome[] = [];
  readonly calls: GatedCall[] = [];

  constructor(private readonly maxOutputTokens?: number) {}

  open(call: GatedCall): GateTicket {
    this.calls.push(call);
    return { ...(this.maxOutputTokens !== undefined ? { maxOutputTokens: this.maxOutputTokens } : {}), close: (outcome) => this.outcomes.push(outcome) };
  }

  admits(): boolean {
    return true;
  }
}

const settings: Record<string, () => ProviderSettings> = {
  openai: () => ({ name: 'openai', kind: 'openai', url: openai.url, apiKey: KEY, chatModel: 'gpt-test', embeddingModel: 'embed-test', timeoutMs: 500 }),
  claude: () => ({ name: 'claude', kind: 'anthropic', url: anthropic.url, apiKey: ANTHROPIC_EMULATOR_KEY, timeoutMs: 5000 }),
  gemini: () => ({ name: 'gemini', kind: 'gemini', url: gemini.url, apiKey: GEMINI_EMULATOR_KEY, embeddingModel: 'gemini-embedding-001', timeoutMs: 5000 }),
  ollama: () => ({ name: 'ollama', kind: 'ollama', url: ollama.url, chatModel: 'llama3.2', embeddingModel: 'nomic-embed-text', timeoutMs: 5000 }),
  backup: () => ({ name: 'backup', kind: 'openai_compatible', url: backup.url, chatModel: 'backup-chat', embeddingModel: 'backup-embed', timeoutMs: 5000 }),
  bedrock: () => ({ name: 'bedrock', kind: 'bedrock', url: bedrock.url, apiKey: BEDROCK_API_KEY, embeddingModel: 'amazon.titan-embed-text-v2:0', timeoutMs: 10_000, bedrock: { region: BEDROCK_REGION } }),
  vertex: () => ({
    name: 'vertex',
    kind: 'vertex',
    url: vertex.url,
    embeddingModel: 'gemini-embedding-001',
    timeoutMs: 10_000,
    vertex: { project: VERTEX_PROJECT, location: VERTEX_LOCATION, accessToken: VERTEX_TOKEN },
  }),
  down: () => ({ name: 'down', kind: 'openai', url: closedUrl, apiKey: KEY, chatModel: 'gpt-test', timeoutMs: 2000 }),
};

function harness(names: string[], gate = new RecordingGate(), fallback = false) {
  const client = new AiClient(
    ProviderRegistry.fromSettings(names.map((name) => settings[name]())),
    {
      defaultProvider: names[0],
      retry: { retries: 0, baseDelayMs: 1 },
      fallback: { enabled: fallback, providers: names.slice(1) },
      prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
      context: { excludedFields: [], sensitiveKeys: [] },
      sensitiveKeys: [],
      limits: { maxBatchInputs: 8 },
      healthCacheMs: 5000,
    },
    undefined,
    { sleep: async () => undefined },
  );
  client.setModelCallGate(gate);
  clients.push(client);
  return { client, gate };
}

const hello = () => [{ role: 'user' as const, content: 'Hello there' }];

describe('the outcome a gate ticket is closed with', () => {
  it.each(['openai', 'claude', 'gemini', 'ollama'])('%s: a generation and a stream went upstream and answered', async (name) => {
    const { client, gate } = harness([name]);
    await client.generateMessages(hello());
    await collect(client.streamMessages(hello()));
    expect(gate.outcomes).toEqual([
      { sent: true, answered: expect.objectContaining({ provider: name }), unanswered: [] },
      { sent: true, answered: expect.objectContaining({ provider: name }), unanswered: [] },
    ]);
  });

  it.each(['openai', 'gemini', 'ollama', 'backup'])('%s: embeddings went upstream and answered', async (name) => {
    const { client, gate } = harness([name]);
    await client.generateEmbeddings(['one', 'two']);
    expect(gate.outcomes).toEqual([{ sent: true, answered: expect.objectContaining({ provider: name }), unanswered: [] }]);
  });

  it('a call that could not connect sent nothing', async () => {
    const { client, gate } = harness(['down']);
    await expect(client.generateMessages(hello())).rejects.toMatchObject({ type: 'connection_error' });
    expect(gate.outcomes).toEqual([{ sent: false, unanswered: [] }]);
  });

  it('an attempt that timed out after going upstream is unanswered, and counts beside the fallback that answered', async () => {
    const { client, gate } = harness(['openai', 'backup'], new RecordingGate(), true);
    openai.server.delayNext(2_000, 1, '/v1/chat/completions');
    const answer = await client.generateMessages(hello());
    expect(answer.provider).toBe('backup');
    expect(gate.outcomes).toEqual([
      {
        sent: true,
        answered: expect.objectContaining({ provider: 'backup', model: 'backup-chat', estimated: false }),
        unanswered: [{ provider: 'openai', providerKind: 'openai', model: 'gpt-test' }],
      },
    ]);
  });

  it('an error status the upstream answered with went upstream but is not unanswered', async () => {
    const { client, gate } = harness(['openai']);
    openai.server.failNext(500);
    await expect(client.generateMessages(hello())).rejects.toMatchObject({ type: 'provider_error' });
    expect(gate.outcomes).toEqual([{ sent: true, unanswered: [] }]);
  });

  it.each([
    { name: 'bedrock', model: 'amazon.titan-embed-text-v2:0', failure: { headers: { 'x-amzn-errortype': 'InternalServerException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, body: { message: 'Internal failure' } } },
    { name: 'vertex', model: 'gemini-embedding-001', failure: { body: { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } } } },
  ])('$name: one request per input, one answered with an error: the others are cut and the call is charged and recorded as sent', async ({ name, model, failure }) => {
    const { client, gate } = harness([name]);
    const records: ModelCallRecord[] = [];
    client.setModelCallSink((record) => records.push(record));
    const emulator = name === 'bedrock' ? bedrock : vertex;
    // The first input's request hangs in flight; the second's is answered with a 500 the provider does not bill.
    emulator.server.inject({ kind: 'delay', ms: 8_000 }).inject({ kind: 'status', status: 500, ...failure });
    await expect(client.generateEmbeddings(['first input', 'second input'])).rejects.toMatchObject({ type: 'provider_error' });
    await Promise.race([emulator.server.waitForAbort(), new Promise((wait) => setTimeout(wait, 3_000))]);
    expect(emulator.server.requests.map((request) => request.aborted)).toEqual([true, false]);
    expect(gate.outcomes).toEqual([{ sent: true, unanswered: [{ provider: name, providerKind: name, model }] }]);
    expect(records).toEqual([expect.objectContaining({ provider: name, model, operation: 'embed', status: 'error', estimated: true, usage: expect.objectContaining({ inputTokens: 6 }) })]);
  });

  it('a caller that leaves a non-streamed call, or a stream before its first chunk, leaves it unanswered', async () => {
    const { client, gate } = harness(['claude']);
    for (const streamed of [false, true]) {
      anthropic.server.delayNext(3_000, 1, '/v1/messages');
      const leave = new AbortController();
      const before = anthropic.server.requests.length;
      const call = streamed ? collect(client.streamMessages(hello(), { signal: leave.signal })) : client.generateMessages(hello(), { signal: leave.signal });
      const failed = call.catch((error: unknown) => error);
      while (anthropic.server.requests.length === before) await new Promise((wait) => setTimeout(wait, 10));
      leave.abort();
      await failed;
    }
    const cut = { sent: true, unanswered: [{ provider: 'claude', providerKind: 'anthropic', model: expect.any(String) }] };
    expect(gate.outcomes).toEqual([cut, cut]);
  });

  it('a stream stopped after its first chunk is unanswered with what its text measured', async () => {
    const { client, gate } = harness(['openai']);
    for await (const event of client.streamMessages(hello())) {
      expect(event.type).toBe('delta');
      break;
    }
    expect(gate.outcomes).toEqual([
      { sent: true, unanswered: [{ provider: 'openai', providerKind: 'openai', model: 'gpt-test', measured: expect.objectContaining({ inputTokens: 3 }) }] },
    ]);
  });
});

describe('the max_tokens a gate bounds a call to', () => {
  it('is what every adapter sends upstream, in place of the caller\'s', async () => {
    const bound = new RecordingGate(77);
    const sentBound = async (name: string, read: () => unknown) => {
      const { client } = harness([name], bound);
      await client.generateMessages(hello(), { maxTokens: 500 });
      expect(read()).toBe(77);
    };
    await sentBound('openai', () => (openai.server.requests.at(-1)!.body as Record<string, unknown>).max_completion_tokens);
    await sentBound('claude', () => (anthropic.server.requests.at(-1)!.body as Record<string, unknown>).max_tokens);
    await sentBound('gemini', () => (gemini.server.requests.at(-1)!.body as { generationConfig?: Record<string, unknown> }).generationConfig?.maxOutputTokens);
    await sentBound('ollama', () => (ollama.server.requests.at(-1)!.body as { options?: Record<string, unknown> }).options?.num_predict);
  });
});
