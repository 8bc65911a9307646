import { AuthenticationError, ConnectionError, InvalidResponseError, TimeoutError } from '../errors';
import type { ModelInfo } from './ai-provider.interface';
import { checkHealth, describeSettings, validateEmbeddings } from './provider-support';

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
      { generate: true, embeddings: true, batchEmbeddings: true, streaming: true, listModels: true },
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
