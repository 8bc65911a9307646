import diagnosticsChannel from 'node:diagnostics_channel';
import { AuthenticationError, ConnectionError, ProviderError, RateLimitError } from '../errors';
import { fallBack, fallbackCandidates, mayFallBack } from './fallback';
import { ProviderRegistry } from './provider-registry';
import { PROVIDER_FALLBACK_CHANNEL, type ProviderFallbackEvent } from './service-request.events';

const registry = ProviderRegistry.fromSettings([
  { name: 'openai', kind: 'openai', apiKey: 'k', chatModel: 'gpt-4o', embeddingModel: 'e', timeoutMs: 1000 },
  { name: 'deepseek', kind: 'deepseek', apiKey: 'k', chatModel: 'deepseek-chat', timeoutMs: 1000 },
  { name: 'mistral', kind: 'mistral', apiKey: 'k', chatModel: 'mistral-small', embeddingModel: 'mistral-embed', timeoutMs: 1000 },
]);
afterAll(() => registry.close());

describe('mayFallBack', () => {
  it('only for eligible errors, with fallback on globally and for the call', () => {
    const on = { enabled: true };
    expect(mayFallBack(on, undefined, new ConnectionError('x'))).toBe(true);
    expect(mayFallBack(on, undefined, new RateLimitError('x'))).toBe(true);
    expect(mayFallBack(on, undefined, new ProviderError('x', { status: 503 }))).toBe(true);
    expect(mayFallBack(on, undefined, new ProviderError('x', { status: 400 }))).toBe(false);
    expect(mayFallBack(on, undefined, new AuthenticationError('x'))).toBe(false);
    expect(mayFallBack(on, false, new ConnectionError('x'))).toBe(false);
    expect(mayFallBack({ enabled: false }, true, new ConnectionError('x'))).toBe(false);
  });
});

describe('fallbackCandidates', () => {
  it('a route with equivalents: those, in order, that have the capability', () => {
    const route = { target: { provider: 'openai', model: 'gpt-4o' }, equivalents: [{ provider: 'deepseek', model: 'deepseek-chat' }, { provider: 'mistral', model: 'm' }] };
    expect(fallbackCandidates(registry, { enabled: true }, route, 'generate', []).map((c) => c.provider.name)).toEqual(['deepseek', 'mistral']);
    expect(fallbackCandidates(registry, { enabled: true }, route, 'embeddings', []).map((c) => c.provider.name)).toEqual(['mistral']);
  });

  it('no model named: the configured fallback providers, else every other registration', () => {
    const route = { target: { provider: 'openai' } };
    expect(fallbackCandidates(registry, { enabled: true }, route, 'generate', []).map((c) => c.provider.name)).toEqual(['deepseek', 'mistral']);
    expect(fallbackCandidates(registry, { enabled: true, providers: ['mistral'] }, route, 'generate', []).map((c) => c.provider.name)).toEqual(['mistral']);
  });
});

describe('fallBack', () => {
  const candidates = () => ['deepseek', 'mistral'].map((name) => ({ provider: registry.get(name) }));

  it('the first candidate that answers, skipping those the gate refuses; each move is published', async () => {
    const moves: ProviderFallbackEvent[] = [];
    const listener = (message: unknown) => moves.push(message as ProviderFallbackEvent);
    diagnosticsChannel.subscribe(PROVIDER_FALLBACK_CHANNEL, listener);
    try {
      const answered = await fallBack({
        error: new ConnectionError('primary down'),
        from: registry.get('openai'),
        candidates: candidates(),
        operation: 'generate',
        admits: ({ provider }) => provider.name !== 'deepseek',
        tryCandidate: async ({ provider }) => `answer of ${provider.name}`,
      });
      expect(answered).toEqual({ result: 'answer of mistral', provider: registry.get('mistral') });
      expect(moves).toEqual([{ from: 'openai', to: 'mistral', operation: 'generate' }]);
    } finally {
      diagnosticsChannel.unsubscribe(PROVIDER_FALLBACK_CHANNEL, listener);
    }
  });

  it("reports the routed provider's error when every candidate fails", async () => {
    const first = new ConnectionError('primary down');
    const tried: string[] = [];
    await expect(
      fallBack({
        error: first,
        from: registry.get('openai'),
        candidates: candidates(),
        operation: 'generate',
        admits: () => true,
        tryCandidate: async ({ provider }) => {
          tried.push(provider.name);
          throw new AuthenticationError(`${provider.name} refused`);
        },
      }),
    ).rejects.toBe(first);
    expect(tried).toEqual(['deepseek', 'mistral']);
  });

  it('stops once the caller aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const first = new ConnectionError('primary down');
    let tried = 0;
    await expect(
      fallBack({ error: first, from: registry.get('openai'), candidates: candidates(), operation: 'generate', signal: controller.signal, admits: () => true, tryCandidate: async () => ++tried }),
    ).rejects.toBe(first);
    expect(tried).toBe(0);
  });
});
