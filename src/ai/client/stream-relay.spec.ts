/** Relaying an opened stream against a real adapter and the OpenAI emulator. */
import { OpenAiEmulator } from '../../../test/emulators/openai-emulator';
import type { GenerateRequest } from '../providers/ai-provider.interface';
import { openStream } from './call-recording';
import type { ModelCallRecord } from './model-call';
import type { GateOutcome } from './model-call-gate';
import { ProviderRegistry } from './provider-registry';
import { SentAttempts } from './sent-attempts';
import { type GenerateStreamEvent, relayStream } from './stream-relay';

let emulator: OpenAiEmulator;
let registry: ProviderRegistry;

beforeAll(async () => {
  emulator = await OpenAiEmulator.start({ apiKey: 'k' });
  registry = ProviderRegistry.fromSettings([{ name: 'openai', kind: 'openai', url: emulator.url, apiKey: 'k', chatModel: 'gpt-test', timeoutMs: 2000 }]);
});
afterAll(async () => {
  await registry.close();
  await emulator.close();
});

async function relayed(stopAfter?: number) {
  const provider = registry.get('openai');
  const request: GenerateRequest = { messages: [{ role: 'user', content: 'hello there' }] };
  const records: ModelCallRecord[] = [];
  const closed: GateOutcome[] = [];
  let ended = 0;
  const attempts = new SentAttempts(undefined, () => 'gpt-test');
  const opened = await attempts.run(provider, undefined, undefined, (options) => openStream(provider, { ...request, onSent: options.onSent }));
  const events: GenerateStreamEvent[] = [];
  for await (const event of relayStream({
    opened,
    provider,
    sent: request,
    admission: { ticket: { close: (outcome) => closed.push(outcome) }, attempts },
    sink: (record) => records.push(record),
    signal: undefined,
    onEnd: () => ended++,
  })) {
    events.push(event);
    if (events.length === stopAfter) break;
  }
  return { events, records, closed, ended };
}

describe('relayStream', () => {
  it('yields the deltas and one done, then records the call and closes the ticket with the answer', async () => {
    const { events, records, closed, ended } = await relayed();
    expect(events.filter((e) => e.type === 'delta').map((e) => (e as { text: string }).text).join('')).toBe('echo: hello there');
    expect(events.at(-1)).toMatchObject({ type: 'done', provider: 'openai', model: 'gpt-test' });
    expect(records).toEqual([expect.objectContaining({ operation: 'stream', status: 'ok' })]);
    expect(closed).toEqual([expect.objectContaining({ sent: true, answered: expect.objectContaining({ provider: 'openai', model: 'gpt-test' }), unanswered: [] })]);
    expect(ended).toBe(1);
  });

  it('a consumer that stops early: recorded as aborted, charged as an unanswered attempt with what it read', async () => {
    const { events, records, closed, ended } = await relayed(1);
    expect(events).toHaveLength(1);
    expect(records).toEqual([expect.objectContaining({ operation: 'stream', status: 'aborted', estimated: true })]);
    expect(closed[0].answered).toBeUndefined();
    expect(closed[0].unanswered).toEqual([expect.objectContaining({ provider: 'openai', model: 'gpt-test', measured: expect.any(Object) })]);
    expect(ended).toBe(1);
  });
});
