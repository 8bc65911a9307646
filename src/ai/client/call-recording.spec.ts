/** The recording stage against a real adapter and the OpenAI emulator. */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { OpenAiEmulator } from '../../../test/emulators/openai-emulator';
import { CallRecorder, openStream } from './call-recording';
import type { ModelCallRecord } from './model-call';
import { ProviderRegistry } from './provider-registry';

let emulator: OpenAiEmulator;
let registry: ProviderRegistry;

beforeAll(async () => {
  emulator = await OpenAiEmulator.start({ apiKey: 'k' });
  registry = ProviderRegistry.fromSettings([
    { name: 'openai', kind: 'openai', url: emulator.url, apiKey: 'k', chatModel: 'gpt-test', embeddingModel: 'embed-test', timeoutMs: 2000 },
  ]);
});
afterAll(async () => {
  await registry.close();
  await emulator.close();
});
beforeEach(() => emulator.server.reset());

function recorder(): { recorder: CallRecorder; records: ModelCallRecord[] } {
  const records: ModelCallRecord[] = [];
  const recording = new CallRecorder();
  recording.sink = (record) => records.push(record);
  return { recorder: recording, records };
}

describe('CallRecorder', () => {
  it('records a generation with the upstream usage', async () => {
    const { recorder: recording, records } = recorder();
    const result = await recording.generate(registry.get('openai'), { messages: [{ role: 'user', content: 'hi' }] });
    expect(result.text).toBe('echo: hi');
    expect(records).toEqual([{ provider: 'openai', providerKind: 'openai', model: 'gpt-test', operation: 'generate', status: 'ok', usage: { inputTokens: 7, outputTokens: 3, cachedTokens: 0 }, estimated: false }]);
  });

  it('records an answered error with no tokens', async () => {
    const { recorder: recording, records } = recorder();
    emulator.serverErrorNext(500);
    await expect(recording.generate(registry.get('openai'), { messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ type: 'provider_error' });
    expect(records).toEqual([expect.objectContaining({ status: 'error', model: 'gpt-test', usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 } })]);
  });

  it('records a connection dropped after the request went out with its input estimated, as the budget charges it', async () => {
    const { recorder: recording, records } = recorder();
    let callerSawSent = false;
    emulator.server.resetNext();
    await expect(recording.embed(registry.get('openai'), { inputs: ['a'.repeat(400)], onSent: () => (callerSawSent = true) })).rejects.toMatchObject({ type: 'connection_error' });
    expect(callerSawSent).toBe(true);
    expect(records).toEqual([expect.objectContaining({ status: 'error', operation: 'embed', estimated: true, usage: expect.objectContaining({ inputTokens: 100, outputTokens: 0 }) })]);
  });

  it('records nothing for a connection that was refused before anything went out', async () => {
    const { recorder: recording, records } = recorder();
    const closed = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const unreachable = ProviderRegistry.fromSettings([{ name: 'gone', kind: 'openai', url: `http://127.0.0.1:${closed}/v1`, apiKey: 'k', chatModel: 'gpt-test', timeoutMs: 2000 }]);
    try {
      await expect(recording.generate(unreachable.get('gone'), { messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ type: 'connection_error' });
      expect(records).toEqual([]);
    } finally {
      await unreachable.close();
    }
  });

  it('builds no record without a sink', async () => {
    const recording = new CallRecorder();
    await expect(recording.embed(registry.get('openai'), { inputs: ['abc'] })).resolves.toMatchObject({ model: 'embed-test' });
  });
});

describe('openStream', () => {
  it('resolves at the first chunk, so a refusal fails the attempt before anything is relayed', async () => {
    const opened = await openStream(registry.get('openai'), { messages: [{ role: 'user', content: 'hi' }] });
    expect(opened.first.done).toBe(false);
    await opened.rest.return?.();
    emulator.serverErrorNext(503);
    await expect(openStream(registry.get('openai'), { messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ type: 'provider_error' });
  });
});
