import { ConnectionError, ProviderError } from '../errors';
import { ProviderRegistry } from './provider-registry';
import { RetriedAttempts } from './retried-attempt';
import { type EventSink, ServiceRequestPublisher, type ServiceRequestEvent } from './service-request.events';

const registry = ProviderRegistry.fromSettings([{ name: 'openai', kind: 'openai', apiKey: 'k', chatModel: 'gpt-4o', timeoutMs: 1000 }]);
afterAll(() => registry.close());

function setUp(retries: number) {
  const events: ServiceRequestEvent[] = [];
  const sink: EventSink = { emit: (_name, event) => events.push(event) };
  const waits: number[] = [];
  const attempts = new RetriedAttempts(new ServiceRequestPublisher(sink), { retries, baseDelayMs: 100 }, {
    sleep: async (ms) => void waits.push(ms),
    random: () => 0,
  });
  return { attempts, events, waits };
}

describe('RetriedAttempts', () => {
  it('retries a retryable failure per the policy, one service.request event per try', async () => {
    const { attempts, events, waits } = setUp(3);
    let tries = 0;
    const answer = await attempts.run(registry.get('openai'), 'generate', undefined, async () => {
      if (++tries < 3) throw new ConnectionError('reset');
      return 'ok';
    });
    expect(answer).toBe('ok');
    expect(waits).toEqual([100, 200]);
    expect(events.map((event) => [event.payload.attempt, event.payload.status, event.payload.errorType])).toEqual([
      [1, 'error', 'connection_error'],
      [2, 'error', 'connection_error'],
      [3, 'success', undefined],
    ]);
  });

  it('does not retry a provider error, and rethrows it', async () => {
    const { attempts, events } = setUp(3);
    const failure = new ProviderError('openai: upstream returned 500', { status: 500 });
    await expect(attempts.run(registry.get('openai'), 'embed', undefined, () => Promise.reject(failure))).rejects.toBe(failure);
    expect(events).toHaveLength(1);
    expect(events[0].payload).toMatchObject({ provider: 'openai', operation: 'embed', status: 'error', errorType: 'provider_error' });
  });
});
