import { OllamaProvider } from '../../src/ai/providers/ollama/ollama.provider';
import { createProvider } from '../../src/ai/providers/provider-factory';
import type { ProviderSettings } from '../../src/ai/providers/ai-provider.interface';
import {
  ConnectionError,
  InvalidRequestError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  RateLimitError,
  TimeoutError,
  TollgateError,
} from '../../src/ai/errors';
import {
  OLLAMA_BODY_MARKER,
  OllamaEmulator,
  ollamaError,
  startOllamaEmulator,
  vectorFor,
} from '../emulators/ollama-emulator';
import { collect, expectSanitized, trackedProviders } from '../support/provider-specs';

describe('OllamaProvider against the Ollama emulator', () => {
  let emulator: OllamaEmulator;
  const providers = trackedProviders<OllamaProvider>();

  const create = (overrides: Partial<ProviderSettings> = {}): OllamaProvider =>
    providers.track(
      new OllamaProvider({
        name: 'ollama',
        kind: 'ollama',
        url: emulator.url,
        timeoutMs: 2000,
        ...overrides,
      }),
    );

  /** What no error message may carry: the emulator's body (Ollama takes no key). */
  const secrets = [OLLAMA_BODY_MARKER];

  const ask = { messages: [{ role: 'user' as const, content: 'Hi' }] };

  beforeAll(async () => {
    emulator = await startOllamaEmulator();
  });
  afterEach(async () => {
    emulator.server.reset();
    emulator.options.streamError = undefined;
    emulator.options.dimensions = 6;
    await providers.closeAll();
  });
  afterAll(() => emulator.close());

  describe('generate', () => {
    it('posts /api/chat with "stream": false, system inline and no options when none are given', async () => {
      const result = await create().generate({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      });

      expect(result).toEqual({
        text: 'Hello from the Ollama emulator',
        model: 'llama3.2',
        finishReason: 'stop',
        usage: { inputTokens: expect.any(Number), outputTokens: 5, totalTokens: expect.any(Number) },
      });
      const sent = emulator.server.requestsTo('/api/chat');
      expect(sent).toHaveLength(1);
      expect(sent[0].headers.authorization).toBeUndefined();
      expect(sent[0].body).toEqual({
        model: 'llama3.2',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
        stream: false,
      });
    });

    it('maps options and a per-call model', async () => {
      await create().generate({ ...ask, model: 'qwen2.5:7b', maxTokens: 32, temperature: 0, topP: 0.5, stop: ['\n'] });
      expect(emulator.server.lastRequest?.body).toEqual({
        model: 'qwen2.5:7b',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: false,
        options: { num_predict: 32, temperature: 0, top_p: 0.5, stop: ['\n'] },
      });
    });

    it('refuses a request with only system messages without calling upstream', async () => {
      await expectSanitized(
        create().generate({ messages: [{ role: 'system', content: 'x' }] }),
        InvalidRequestError,
        secrets,
      );
      expect(emulator.server.requests).toHaveLength(0);
    });

    it('streams NDJSON deltas and one final chunk', async () => {
      const chunks = await collect(create().generateStream(ask));
      expect(
        chunks
          .filter((c) => !c.done)
          .map((c) => (c as { text: string }).text)
          .join(''),
      ).toBe('Hello from the Ollama emulator');
      expect(chunks[chunks.length - 1]).toEqual({
        done: true,
        model: 'llama3.2',
        finishReason: 'stop',
        usage: { inputTokens: expect.any(Number), outputTokens: 5, totalTokens: expect.any(Number) },
      });
      expect(emulator.server.lastRequest?.body).toMatchObject({ stream: true });
    });

    it('turns an error line after the 200 into a ProviderError', async () => {
      emulator.options.streamError = true;
      await expectSanitized(collect(create().generateStream(ask)), ProviderError, secrets);
    });

    it('refuses a stream that ends before done, or a line that is not an object', async () => {
      emulator.server.inject({ kind: 'status', status: 200, body: '{"message":{"content":"partial"},"done":false}\n' });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
      emulator.server.inject({ kind: 'status', status: 200, body: '["not an object"]\n' });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
      emulator.server.inject({ kind: 'status', status: 200, body: `{"done": ${OLLAMA_BODY_MARKER}\n` });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
    });

    it('maps a model that is not pulled to ModelNotAvailableError, in stream mode too', async () => {
      await expectSanitized(create({ chatModel: 'mistral' }).generate(ask), ModelNotAvailableError, secrets);
      await expectSanitized(
        collect(create({ chatModel: 'mistral' }).generateStream(ask)),
        ModelNotAvailableError,
        secrets,
      );
    });
  });

  describe('embeddings', () => {
    it('embeds a single input as a one-element array', async () => {
      const result = await create().embed({ inputs: ['alpha'] });
      expect(result).toEqual({
        embeddings: [vectorFor('alpha', 6)],
        model: 'nomic-embed-text',
        usage: { inputTokens: 5 },
      });
      expect(emulator.server.lastRequest?.path).toBe('/api/embed');
      expect(emulator.server.lastRequest?.body).toEqual({ model: 'nomic-embed-text', input: ['alpha'] });
    });

    it('embeds a batch in ONE upstream call, in input order', async () => {
      const inputs = ['one', 'two', 'three', 'four'];
      const result = await create().embed({ inputs });
      expect(result.embeddings).toEqual(inputs.map((t) => vectorFor(t, 6)));
      expect(emulator.server.requestsTo('/api/embed')).toHaveLength(1);
    });

    it('accepts vectors of the configured dimension', async () => {
      const result = await create({ embeddingDimensions: 6 }).embed({ inputs: ['a', 'b'] });
      expect(result.embeddings.map((v) => v.length)).toEqual([6, 6]);
    });

    it('refuses vectors of another length instead of padding or truncating them', async () => {
      emulator.options.dimensions = 5;
      const error = await expectSanitized(
        create({ embeddingDimensions: 6 }).embed({ inputs: ['a'] }),
        InvalidResponseError,
        secrets,
      );
      expect(error.message).toContain('5-dimension embeddings, expected 6');
    });

    it('refuses a response with a missing or extra vector', async () => {
      emulator.server.inject({ kind: 'status', status: 200, body: { embeddings: [[0.1], [0.2]] } });
      await expectSanitized(create().embed({ inputs: ['a'] }), InvalidResponseError, secrets);
      emulator.server.inject({ kind: 'status', status: 200, body: { model: 'x' } });
      await expectSanitized(create().embed({ inputs: ['a'] }), InvalidResponseError, secrets);
    });

    it('refuses an empty vector', async () => {
      emulator.server.inject({ kind: 'status', status: 200, body: { embeddings: [[]] } });
      await expectSanitized(create().embed({ inputs: ['a'] }), InvalidResponseError, secrets);
    });

    it('refuses an empty batch without calling upstream', async () => {
      await expectSanitized(create().embed({ inputs: [] }), InvalidRequestError, secrets);
      expect(emulator.server.requests).toHaveLength(0);
    });

    it('refuses a non-integer configured dimension at construction', () => {
      expect(() => create({ embeddingDimensions: 1.5 })).toThrow(TollgateError);
    });

    it('maps an embedding model that is not pulled to ModelNotAvailableError', async () => {
      const error = await expectSanitized(
        create({ embeddingModel: 'mxbai-embed-large' }).embed({ inputs: ['a'] }),
        ModelNotAvailableError,
        secrets,
      );
      expect(error.message).toContain("'mxbai-embed-large'");
    });
  });

  describe('models', () => {
    it('lists the pulled models from /api/tags', async () => {
      expect(await create().listModels()).toEqual([
        { id: 'llama3.2:latest', provider: 'ollama' },
        { id: 'nomic-embed-text:latest', provider: 'ollama' },
        { id: 'qwen2.5:7b', provider: 'ollama' },
      ]);
    });

    it('rejects a tags answer without models', async () => {
      emulator.server.inject({ kind: 'status', status: 200, body: { tags: [] } });
      await expectSanitized(create().listModels(), InvalidResponseError, secrets);
    });
  });

  describe('health', () => {
    it('is healthy when the configured models are pulled (names without :latest)', async () => {
      const health = await create().healthCheck();
      expect(health).toMatchObject({
        provider: 'ollama',
        kind: 'ollama',
        status: 'healthy',
        reachable: true,
        ready: true,
        model: 'llama3.2',
      });
      expect(health.latencyMs).toBeGreaterThanOrEqual(0);
    });

    it('is healthy with an explicit tag that is pulled, including :latest', async () => {
      expect((await create({ chatModel: 'qwen2.5:7b' }).healthCheck()).status).toBe('healthy');
      expect((await create({ chatModel: 'llama3.2:latest' }).healthCheck()).status).toBe('healthy');
    });

    it('is unhealthy when a configured model is not pulled', async () => {
      const health = await create({ chatModel: 'qwen2.5:14b' }).healthCheck();
      expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
      expect(health.error).toContain('qwen2.5:14b');
    });

    it('is unhealthy when the server answers 500', async () => {
      emulator.server.failNext(500, { body: ollamaError('boom') });
      const health = await create().healthCheck();
      expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
      expect(health.error).not.toContain(OLLAMA_BODY_MARKER);
    });

    it('is unavailable when the server is down', async () => {
      const gone = await startOllamaEmulator();
      await gone.close();
      const health = await create({ url: gone.url }).healthCheck();
      expect(health).toMatchObject({ status: 'unavailable', reachable: false, ready: false });
    });
  });

  describe('errors', () => {
    it('maps 400 to a non-retryable ProviderError', async () => {
      emulator.server.failNext(400, { body: ollamaError('invalid options') });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(400);
    });

    it.each([500, 503])('maps %i to ProviderError with the status', async (status) => {
      emulator.server.failNext(status, { body: ollamaError('server busy') });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(status);
    });

    it('maps 429 with Retry-After to RateLimitError', async () => {
      emulator.server.rateLimitNext('2', { body: ollamaError('too many requests') });
      const error = await expectSanitized(create().embed({ inputs: ['a'] }), RateLimitError, secrets);
      expect(error.retryAfterMs).toBe(2000);
    });

    it('maps malformed JSON to InvalidResponseError', async () => {
      emulator.server.malformedNext();
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
    });

    it('maps a 200 without message content to InvalidResponseError', async () => {
      emulator.server.inject({ kind: 'status', status: 200, body: { done: true } });
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
    });

    it('maps a connection reset to ConnectionError', async () => {
      emulator.server.resetNext();
      await expectSanitized(create().generate(ask), ConnectionError, secrets);
    });

    it('maps a slow upstream to TimeoutError and aborts the upstream request', async () => {
      emulator.server.delayNext(Infinity);
      await expectSanitized(create({ timeoutMs: 150 }).embed({ inputs: ['a'] }), TimeoutError, secrets);
      await emulator.server.waitForAbort();
      expect(emulator.server.lastRequest?.aborted).toBe(true);
    });

    it('maps a refused connection to ConnectionError', async () => {
      const gone = await startOllamaEmulator();
      await gone.close();
      await expectSanitized(create({ url: gone.url }).generate(ask), ConnectionError, secrets);
    });
  });

  describe('the emulator speaks Ollama', () => {
    const post = (path: string, body: unknown) =>
      fetch(`${emulator.url}${path}`, { method: 'POST', body: JSON.stringify(body) });

    it('400 "model is required" when the model is missing', async () => {
      const response = await post('/api/chat', { messages: [] });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain('model is required');
    });

    it('404 when the model is not pulled', async () => {
      const response = await post('/api/embed', { model: 'missing', input: 'a' });
      expect(response.status).toBe(404);
    });

    it('streams NDJSON unless "stream": false', async () => {
      const response = await post('/api/chat', { model: 'llama3.2', messages: [{ role: 'user', content: 'Hi' }] });
      expect(response.headers.get('content-type')).toBe('application/x-ndjson');
      const lines = (await response.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { done: boolean });
      expect(lines[lines.length - 1].done).toBe(true);
      expect(lines.length).toBeGreaterThan(1);
    });

    it('takes a string input on /api/embed', async () => {
      const response = await post('/api/embed', { model: 'nomic-embed-text', input: 'a' });
      expect(((await response.json()) as { embeddings: number[][] }).embeddings).toHaveLength(1);
    });
  });

  it('two registrations with different URLs coexist', async () => {
    const other = await startOllamaEmulator({ reply: 'other server' });
    try {
      const [a, b] = await Promise.all([create().generate(ask), create({ url: other.url }).generate(ask)]);
      expect(a.text).toBe('Hello from the Ollama emulator');
      expect(b.text).toBe('other server');
    } finally {
      await other.close();
    }
  });

  it('describes itself with its defaults', () => {
    const provider = providers.track(new OllamaProvider({ name: 'local', kind: 'ollama', timeoutMs: 30000 }));
    expect(provider.describe()).toEqual({
      name: 'local',
      kind: 'ollama',
      url: 'http://localhost:11434',
      chatModel: 'llama3.2',
      embeddingModel: 'nomic-embed-text',
      timeoutMs: 30000,
      capabilities: { generate: true, embeddings: true, batchEmbeddings: true, streaming: true, listModels: true },
    });
  });

  it('is registered in the provider factory', async () => {
    const provider = createProvider({ name: 'by-factory', kind: 'ollama', url: emulator.url, timeoutMs: 2000 });
    try {
      expect(provider).toBeInstanceOf(OllamaProvider);
      expect(provider.name).toBe('by-factory');
    } finally {
      await provider.close();
    }
  });
});
