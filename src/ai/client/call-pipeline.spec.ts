/** The composed stages against real adapters and two OpenAI emulators. */
import { OpenAiEmulator } from '../../../test/emulators/openai-emulator';
import { CallPipeline } from './call-pipeline';
import { CallRecorder } from './call-recording';
import type { GateOutcome, ModelCallGate } from './model-call-gate';
import { ModelRouter } from './model-routing';
import { ProviderRegistry } from './provider-registry';
import { RetriedAttempts } from './retried-attempt';
import { ServiceRequestPublisher } from './service-request.events';

let first: OpenAiEmulator;
let second: OpenAiEmulator;
let registry: ProviderRegistry;

beforeAll(async () => {
  [first, second] = await Promise.all([OpenAiEmulator.start({ apiKey: 'k' }), OpenAiEmulator.start({ apiKey: 'k' })]);
  registry = ProviderRegistry.fromSettings([
    { name: 'one', kind: 'openai', url: first.url, apiKey: 'k', chatModel: 'gpt-test', timeoutMs: 2000 },
    { name: 'two', kind: 'openai', url: second.url, apiKey: 'k', chatModel: 'gpt-test', timeoutMs: 2000 },
    { name: 'chatonly', kind: 'deepseek', url: first.url, apiKey: 'k', chatModel: 'gpt-test', timeoutMs: 2000 },
  ]);
});
afterAll(async () => {
  await registry.close();
  await Promise.all([first.close(), second.close()]);
});
beforeEach(() => [first, second].forEach((emulator) => emulator.server.reset()));

function pipeline(gate?: ModelCallGate): CallPipeline {
  const router = new ModelRouter(registry, 'one', { chat: ['one/gpt-test', 'two/gpt-test'] });
  const attempts = new RetriedAttempts(new ServiceRequestPublisher(), { retries: 1, baseDelayMs: 1 }, { sleep: async () => undefined });
  const built = new CallPipeline(registry, router, { enabled: true }, attempts);
  built.gate = gate;
  return built;
}

const recorder = new CallRecorder();
const generate = (options: { model?: string; enableFallback?: boolean }) => ({
  capability: 'generate' as const,
  operation: 'generate' as const,
  options,
  call: (provider: Parameters<CallRecorder['generate']>[0], model: string | undefined) => recorder.generate(provider, { messages: [{ role: 'user', content: 'hi' }], model }),
});

describe('CallPipeline', () => {
  it('routes an alias to its first target', async () => {
    const answered = await pipeline().run(generate({ model: 'chat' }));
    expect(answered.provider.name).toBe('one');
    expect(answered.result.text).toBe('echo: hi');
    expect(second.server.requests).toHaveLength(0);
  });

  it('retries, then falls back to the next target on an eligible error', async () => {
    first.serverErrorNext(503, 1);
    first.server.resetNext(2);
    const answered = await pipeline().run(generate({ model: 'chat' }));
    expect(answered.provider.name).toBe('two');
  });

  it('reports the first error when fallback is off for the call', async () => {
    first.serverErrorNext(503);
    await expect(pipeline().run(generate({ model: 'chat', enableFallback: false }))).rejects.toMatchObject({ type: 'provider_error', provider: 'one' });
    expect(second.server.requests).toHaveLength(0);
  });

  it('refuses a capability before any upstream call', async () => {
    await expect(pipeline().run({ ...generate({}), options: { provider: 'chatonly' }, capability: 'embeddings' })).rejects.toMatchObject({ type: 'capability_not_supported' });
    await expect(pipeline().run({ ...generate({}), options: { provider: 'chatonly' }, features: ['vision'] })).rejects.toMatchObject({ type: 'capability_not_supported' });
    expect(first.server.requests).toHaveLength(0);
  });

  it('a gated call: the ticket comes back with the answer, or is closed when every target fails', async () => {
    const closed: GateOutcome[] = [];
    const gate: ModelCallGate = { open: () => ({ close: (outcome) => closed.push(outcome) }), admits: (provider) => provider === 'one' };
    const gated = { operation: 'generate' as const, setting: 'chatModel' as const, inputTokens: () => 1 };
    const answered = await pipeline(gate).run({ ...generate({ model: 'chat' }), gated });
    expect(answered.ticket).toBeDefined();
    expect(closed).toHaveLength(0);
    first.serverErrorNext(503);
    await expect(pipeline(gate).run({ ...generate({ model: 'chat' }), gated })).rejects.toMatchObject({ provider: 'one' });
    // The gate admits no move to 'two': the call ends with the ticket closed, nothing answered.
    expect(second.server.requests).toHaveLength(0);
    expect(closed).toEqual([{ sent: false, unanswered: [] }]);
  });
});
