import { AuthenticationError, ConnectionError, InvalidResponseError, ModelNotAvailableError, TimeoutError, TollgateError } from '../errors';
import type { ModelInfo } from './ai-provider.interface';
import {
  checkEmbeddingDimensions,
  checkHealth,
  describeSettings,
  probeModelHealth,
  usageOf,
  validateEmbeddings,
} from './provider-support';

describe('validateEmbeddings', () => {
  it('accepts one finite vector per input of one shared length', () => {
    expect(validateEmbeddings([[1, 2], [3, -4.5]], 2, undefined, 'p')).toEqual([[1, 2], [3, -4.5]]);
    expect(validateEmbeddings([[1, 2, 3]], 1, 3, 'p')).toEqual([[1, 2, 3]]);
  });

  it.each([
    ['count mismatch', [[1, 2]], 2, undefined, 'returned 1 embeddings for 2 inputs'],
    ['NaN', [[1, NaN]], 1, undefined, 'non-finite'],
    ['Infinity', [[Infinity, 1]], 1, undefined, 'non-finite'],
    ['string value', [[1, '2']], 1, undefined, 'non-finite'],
    ['not a list', ['abc'], 1, undefined, 'not a number list'],
    ['empty vector', [[]], 1, undefined, 'not a number list'],
    ['ragged lengths', [[1, 2], [1]], 2, undefined, 'different lengths'],
    ['shorter than configured (never padded)', [[1, 2]], 1, 3, 'returned 2-dimension embeddings, expected 3'],
    ['longer than configured (never truncated)', [[1, 2, 3, 4]], 1, 3, 'expected 3'],
  ])('rejects %s', (_label, vectors, count, dimensions, message) => {
    expect(() => validateEmbeddings(vectors as unknown[], count as number, dimensions as number | undefined, 'p')).toThrow(
      InvalidResponseError,
    );
    expect(() => validateEmbeddings(vectors as unknown[], count as number, dimensions as number | undefined, 'p')).toThrow(
      message as string,
    );
  });
});

describe('describeSettings', () => {
  it('drops credentials and query strings from the url and never includes the key', () => {
    const description = describeSettings(
      { name: 'n', kind: 'openai_compatible', url: 'https://user:pw@llm.example/v1?token=abc', apiKey: 'sk-1', timeoutMs: 5 } as never,
      { generate: true, embeddings: true, batchEmbeddings: true, streaming: true, listModels: true, tools: false, structuredOutput: false, vision: false },
    );
    expect(description.url).toBe('https://llm.example/v1');
    const text = JSON.stringify(description);
    for (const secret of ['sk-1', 'pw', 'token=abc', 'apiKey']) expect(text).not.toContain(secret);
  });
});

describe('checkHealth', () => {
  const provider = (listModels: () => Promise<ModelInfo[]>) => ({ name: 'p', kind: 'openai' as const, listModels });
  const models = (...ids: string[]) => async () => ids.map((id) => ({ id, provider: 'p' }));

  it('is healthy when every required model is listed, in any of the listed spellings', async () => {
    const health = await checkHealth(provider(models('a', 'models/b', 'c:latest')), ['a', 'b', 'c']);
    expect(health).toMatchObject({ provider: 'p', kind: 'openai', status: 'healthy', reachable: true, ready: true, model: 'a' });
  });

  it('is unhealthy when a required model is missing', async () => {
    const health = await checkHealth(provider(models('a')), ['a', 'z']);
    expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
    expect(health.error).toContain("'z'");
  });

  it('is unavailable on connection errors and timeouts, unhealthy on other typed errors', async () => {
    const failing = (error: Error) => provider(() => Promise.reject(error));
    expect(await checkHealth(failing(new ConnectionError('p: down')), ['a'])).toMatchObject({ status: 'unavailable', reachable: false });
    expect(await checkHealth(failing(new TimeoutError('p: slow')), ['a'])).toMatchObject({ status: 'unavailable', reachable: false });
    expect(await checkHealth(failing(new AuthenticationError('p: key')), ['a'])).toMatchObject({
      status: 'unhealthy',
      reachable: true,
      error: 'p: key',
    });
  });

  it('summarises an untyped failure instead of echoing it', async () => {
    const health = await checkHealth(provider(() => Promise.reject(new Error('raw upstream text'))), ['a']);
    expect(health.error).toBe('p: health check failed');
  });
});

describe('probeModelHealth', () => {
  const provider = { name: 'p', kind: 'gemini' as const };

  it('asks for every model and is healthy when each answered, naming the first', async () => {
    const asked: string[] = [];
    const health = await probeModelHealth(provider, ['chat', 'embed'], async (model) => asked.push(model));
    expect(asked).toEqual(['chat', 'embed']);
    expect(health).toMatchObject({ provider: 'p', kind: 'gemini', status: 'healthy', reachable: true, ready: true, model: 'chat' });
  });

  it('is unavailable when the transport failed and unhealthy when the provider answered otherwise', async () => {
    const failing = (error: Error) => probeModelHealth(provider, ['chat'], () => Promise.reject(error));
    expect(await failing(new TimeoutError('p: slow'))).toMatchObject({ status: 'unavailable', reachable: false, ready: false });
    expect(await failing(new ModelNotAvailableError('p: no chat'))).toMatchObject({
      status: 'unhealthy',
      reachable: true,
      error: 'p: no chat',
    });
  });

  it('lets an untyped failure through rather than reporting its text', async () => {
    await expect(probeModelHealth(provider, ['chat'], () => Promise.reject(new Error('bug')))).rejects.toThrow('bug');
  });
});

describe('checkEmbeddingDimensions', () => {
  it('accepts no setting or a positive integer and names the registration otherwise', () => {
    expect(() => checkEmbeddingDimensions({ name: 'p' })).not.toThrow();
    expect(() => checkEmbeddingDimensions({ name: 'p', embeddingDimensions: 768 })).not.toThrow();
    for (const embeddingDimensions of [0, -3, 1.5]) {
      expect(() => checkEmbeddingDimensions({ name: 'p', embeddingDimensions })).toThrow(TollgateError);
      expect(() => checkEmbeddingDimensions({ name: 'p', embeddingDimensions })).toThrow('p: embedding dimensions must be a positive integer');
    }
  });
});

describe('usageOf', () => {
  const summed = { input: 'in', output: 'out' };

  it('sums input and output when the upstream gives no total', () => {
    expect(usageOf({ in: 3, out: 4 }, summed)).toEqual({ inputTokens: 3, outputTokens: 4, totalTokens: 7 });
    expect(usageOf({ in: 3 }, summed)).toEqual({ inputTokens: 3, outputTokens: undefined, totalTokens: undefined });
  });

  it("takes the upstream's own total when it has a field for it", () => {
    expect(usageOf({ in: 3, out: 4, all: 9 }, { ...summed, total: 'all' })).toEqual({ inputTokens: 3, outputTokens: 4, totalTokens: 9 });
    expect(usageOf({ all: 9 }, { ...summed, total: 'all' })).toEqual({ inputTokens: undefined, outputTokens: undefined, totalTokens: 9 });
  });

  it('is undefined when nothing countable is there', () => {
    expect(usageOf(undefined, summed)).toBeUndefined();
    expect(usageOf([3, 4], summed)).toBeUndefined();
    expect(usageOf({ in: '3', out: Number.NaN }, summed)).toBeUndefined();
  });
});
