import { GeminiProvider } from '../../src/ai/providers/gemini/gemini.provider';
import {
  AuthenticationError,
  InvalidRequestError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  RateLimitError,
  TollgateError,
} from '../../src/ai/errors';
import {
  GEMINI_BODY_MARKER,
  GEMINI_EMULATOR_KEY,
  geminiError,
  startGeminiEmulator,
  vectorFor,
} from '../emulators/gemini-emulator';
import { collect, expectSanitized } from '../support/provider-specs';
import { describeSharedProviderBehaviour, providerSuite } from '../support/provider-suite';

describe('GeminiProvider against the Gemini emulator', () => {
  const suite = providerSuite({
    start: () => startGeminiEmulator(),
    build: (settings) => new GeminiProvider(settings),
    settings: (emulator) => ({ name: 'gemini', kind: 'gemini', url: emulator.url, apiKey: GEMINI_EMULATOR_KEY, timeoutMs: 2000 }),
    secrets: [GEMINI_BODY_MARKER, GEMINI_EMULATOR_KEY],
    resetOptions: (emulator) => {
      emulator.options.streamErrorCode = undefined;
    },
  });
  const { create, secrets, ask } = suite;

  describe('generate', () => {
    it('sends systemInstruction and contents with the key in x-goog-api-key', async () => {
      const result = await create().generate({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
          { role: 'user', content: 'Again' },
        ],
      });

      expect(result).toEqual({
        text: 'Hello from the Gemini emulator',
        model: 'gemini-2.5-flash',
        finishReason: 'stop',
        usage: { inputTokens: expect.any(Number), outputTokens: 5, totalTokens: expect.any(Number) },
      });
      const sent = suite.emulator.server.requestsTo('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(sent).toHaveLength(1);
      expect(sent[0].headers['x-goog-api-key']).toBe(GEMINI_EMULATOR_KEY);
      expect(sent[0].query.get('key')).toBeNull();
      // No options were given, so no generationConfig is sent.
      expect(sent[0].body).toEqual({
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'Hi' }] },
          { role: 'model', parts: [{ text: 'Hello' }] },
          { role: 'user', parts: [{ text: 'Again' }] },
        ],
      });
    });

    it('maps options to generationConfig and honours a per-call model', async () => {
      await create().generate({
        ...ask,
        model: 'models/gemini-2.5-pro',
        maxTokens: 64,
        temperature: 0.3,
        topP: 0.8,
        stop: ['END'],
      });
      const sent = suite.emulator.server.lastRequest;
      expect(sent?.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
      expect(sent?.body).toEqual({
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
        generationConfig: { maxOutputTokens: 64, temperature: 0.3, topP: 0.8, stopSequences: ['END'] },
      });
    });

    it('refuses a request with only system messages without calling upstream', async () => {
      await expectSanitized(
        create().generate({ messages: [{ role: 'system', content: 'x' }] }),
        InvalidRequestError,
        secrets,
      );
      expect(suite.emulator.server.requests).toHaveLength(0);
    });

    it('returns empty text for a candidate stopped without content', async () => {
      suite.emulator.server.inject({
        kind: 'status',
        status: 200,
        body: { candidates: [{ finishReason: 'SAFETY', index: 0 }] },
      });
      const result = await create().generate(ask);
      expect(result).toMatchObject({ text: '', finishReason: 'content_filter', model: 'gemini-2.5-flash' });
    });

    it('skips thought parts', async () => {
      suite.emulator.server.inject({
        kind: 'status',
        status: 200,
        body: { candidates: [{ content: { parts: [{ text: 'thinking', thought: true }, { text: 'answer' }] } }] },
      });
      expect((await create().generate(ask)).text).toBe('answer');
    });

    it('streams SSE partial responses and one final chunk', async () => {
      const chunks = await collect(create().generateStream({ ...ask, maxTokens: 20 }));
      expect(
        chunks
          .filter((c) => !c.done)
          .map((c) => (c as { text: string }).text)
          .join(''),
      ).toBe('Hello from the Gemini emulator');
      expect(chunks[chunks.length - 1]).toEqual({
        done: true,
        model: 'gemini-2.5-flash',
        finishReason: 'stop',
        usage: { inputTokens: expect.any(Number), outputTokens: 5, totalTokens: expect.any(Number) },
      });
      const sent = suite.emulator.server.lastRequest;
      expect(sent?.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
      expect(sent?.query.get('alt')).toBe('sse');
      expect(sent?.headers['x-goog-api-key']).toBe(GEMINI_EMULATOR_KEY);
      expect(sent?.body).toEqual({
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
        generationConfig: { maxOutputTokens: 20 },
      });
    });

    it('maps an error event after the 200 to the matching error class', async () => {
      suite.emulator.options.streamErrorCode = 503;
      const error = await expectSanitized(collect(create().generateStream(ask)), ProviderError, secrets);
      expect(error.status).toBe(503);
    });

    it('takes a last event whose content has only a role (no parts) as the finish', async () => {
      const events = [
        { candidates: [{ content: { parts: [{ text: 'cut' }], role: 'model' } }] },
        { candidates: [{ content: { role: 'model' }, finishReason: 'MAX_TOKENS' }], usageMetadata: { promptTokenCount: 3, totalTokenCount: 13 } },
      ];
      suite.emulator.server.inject({ kind: 'status', status: 200, body: events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join('') });
      expect(await collect(create().generateStream(ask))).toEqual([
        { done: false, text: 'cut' },
        { done: true, model: 'gemini-2.5-flash', finishReason: 'length', usage: { inputTokens: 3, totalTokens: 13 } },
      ]);
    });

    it('refuses a stream cut short before a finish reason', async () => {
      suite.emulator.server.inject({
        kind: 'status',
        status: 200,
        body: 'data: {"candidates":[{"content":{"parts":[{"text":"par"}]}}]}\n\n',
      });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
    });

    it('refuses a malformed stream event', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: `data: {"candidates": [${GEMINI_BODY_MARKER}\n\n` });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
    });

    it('reports a blocked prompt as a non-retryable ProviderError', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { promptFeedback: { blockReason: 'SAFETY' } } });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(400);
      expect(error.message).toContain('SAFETY');
    });
  });

  describe('embeddings', () => {
    it('embeds a single input through batchEmbedContents', async () => {
      const result = await create().embed({ inputs: ['alpha'] });
      expect(result).toEqual({ embeddings: [vectorFor('alpha', 8)], model: 'gemini-embedding-001' });
      const sent = suite.emulator.server.requests;
      expect(sent).toHaveLength(1);
      expect(sent[0].path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
      expect(sent[0].body).toEqual({
        requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'alpha' }] } }],
      });
    });

    it('embeds a batch in ONE upstream call, in input order', async () => {
      const inputs = ['one', 'two', 'three'];
      const result = await create().embed({ inputs });
      expect(result.embeddings).toEqual(inputs.map((t) => vectorFor(t, 8)));
      expect(suite.emulator.server.requests).toHaveLength(1);
      expect((suite.emulator.server.lastRequest?.body as { requests: unknown[] }).requests).toHaveLength(3);
    });

    it('requests the configured dimension and accepts vectors of that length', async () => {
      const result = await create({ embeddingDimensions: 4 }).embed({ inputs: ['a', 'b'] });
      expect(result.embeddings.every((v) => v.length === 4)).toBe(true);
      const requests = (suite.emulator.server.lastRequest?.body as { requests: Array<Record<string, unknown>> }).requests;
      expect(requests.map((r) => r.outputDimensionality)).toEqual([4, 4]);
    });

    it('refuses a wrong-length vector instead of padding or truncating it', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { embeddings: [{ values: [0.1, 0.2, 0.3] }] } });
      const error = await expectSanitized(
        create({ embeddingDimensions: 4 }).embed({ inputs: ['a'] }),
        InvalidResponseError,
        secrets,
      );
      expect(error.message).toContain('3-dimension embeddings, expected 4');
    });

    it('refuses a response with fewer vectors than inputs, or none at all', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { embeddings: [{ values: [0.1] }] } });
      await expectSanitized(create().embed({ inputs: ['a', 'b'] }), InvalidResponseError, secrets);
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { embedding: { values: [0.1] } } });
      await expectSanitized(create().embed({ inputs: ['a'] }), InvalidResponseError, secrets);
    });

    it('refuses vectors of mixed lengths or with non-numbers', async () => {
      suite.emulator.server.inject({
        kind: 'status',
        status: 200,
        body: { embeddings: [{ values: [0.1, 0.2] }, { values: [0.1] }] },
      });
      await expectSanitized(create().embed({ inputs: ['a', 'b'] }), InvalidResponseError, secrets);
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { embeddings: [{ values: [0.1, 'x'] }] } });
      await expectSanitized(create().embed({ inputs: ['a'] }), InvalidResponseError, secrets);
    });

    it('refuses an empty batch without calling upstream', async () => {
      await expectSanitized(create().embed({ inputs: [] }), InvalidRequestError, secrets);
      expect(suite.emulator.server.requests).toHaveLength(0);
    });

    it('refuses a non-positive configured dimension at construction', () => {
      expect(() => create({ embeddingDimensions: 0 })).toThrow(TollgateError);
    });

    it('maps an unknown embedding model to ModelNotAvailableError', async () => {
      await expectSanitized(
        create().embed({ inputs: ['a'], model: 'text-embedding-missing' }),
        ModelNotAvailableError,
        secrets,
      );
    });
  });

  describe('models', () => {
    it('lists models without the models/ prefix', async () => {
      expect(await create().listModels()).toEqual([
        { id: 'gemini-2.5-flash', provider: 'gemini' },
        { id: 'gemini-2.5-pro', provider: 'gemini' },
        { id: 'gemini-embedding-001', provider: 'gemini' },
      ]);
    });

    it('follows nextPageToken', async () => {
      const many = await startGeminiEmulator({ chatModels: Array.from({ length: 1200 }, (_, i) => `gemini-${i}`) });
      try {
        const models = await create({ url: many.url }).listModels();
        expect(models).toHaveLength(1201);
        expect(many.server.requests.map((r) => r.query.get('pageToken'))).toEqual([null, '1000']);
      } finally {
        await many.close();
      }
    });

    it('rejects a model list that is not an object, or whose models are not an array', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { models: 'x' } });
      await expectSanitized(create().listModels(), InvalidResponseError, secrets);
      suite.emulator.server.inject({ kind: 'status', status: 200, body: ['x'] });
      await expectSanitized(create().listModels(), InvalidResponseError, secrets);
    });

    it('treats an empty account answer as no models', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: {} });
      expect(await create().listModels()).toEqual([]);
    });
  });

  describe('health', () => {
    it('is healthy when both configured models exist', async () => {
      const health = await create().healthCheck();
      expect(health).toMatchObject({
        provider: 'gemini',
        kind: 'gemini',
        status: 'healthy',
        reachable: true,
        ready: true,
      });
      expect(suite.emulator.server.requests.map((r) => r.path)).toEqual([
        '/v1beta/models/gemini-2.5-flash',
        '/v1beta/models/gemini-embedding-001',
      ]);
    });

    it('is unhealthy when a configured model is missing', async () => {
      const health = await create({ embeddingModel: 'missing-embedder' }).healthCheck();
      expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
      expect(health.error).toContain("'missing-embedder'");
      expect(health.error).not.toContain(GEMINI_BODY_MARKER);
    });

  });

  describe('errors', () => {
    it('maps a wrong key (400 API_KEY_INVALID) to AuthenticationError', async () => {
      const error = await expectSanitized(
        create({ apiKey: 'AIzaWrongKey' }).generate(ask),
        AuthenticationError,
        secrets,
      );
      expect(error.message).not.toContain('AIzaWrongKey');
      expect(suite.emulator.server.lastRequest?.headers['x-goog-api-key']).toBe('AIzaWrongKey');
    });

    it('maps 403 PERMISSION_DENIED to AuthenticationError', async () => {
      suite.emulator.server.failNext(403, { body: geminiError(403, 'PERMISSION_DENIED', 'denied') });
      await expectSanitized(create().generate(ask), AuthenticationError, secrets);
    });

    it('maps 404 NOT_FOUND for the model to ModelNotAvailableError', async () => {
      const error = await expectSanitized(
        create({ chatModel: 'gemini-missing' }).generate(ask),
        ModelNotAvailableError,
        secrets,
      );
      expect(error.message).toContain("'gemini-missing'");
    });

    it('maps 429 RESOURCE_EXHAUSTED with Retry-After to RateLimitError', async () => {
      suite.emulator.server.rateLimitNext('3', { body: geminiError(429, 'RESOURCE_EXHAUSTED', 'quota') });
      const error = await expectSanitized(create().generate(ask), RateLimitError, secrets);
      expect(error.retryAfterMs).toBe(3000);
    });

    it('reads the RetryInfo retryDelay when there is no Retry-After header', async () => {
      suite.emulator.server.failNext(429, {
        body: geminiError(429, 'RESOURCE_EXHAUSTED', 'quota', [
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' },
        ]),
      });
      const error = await expectSanitized(create().embed({ inputs: ['a'] }), RateLimitError, secrets);
      expect(error.retryAfterMs).toBe(37000);
    });

    it.each([
      [500, 'INTERNAL'],
      [503, 'UNAVAILABLE'],
    ])('maps %i %s to ProviderError with the status', async (status, code) => {
      suite.emulator.server.failNext(status, { body: geminiError(status, code, 'trouble') });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(status);
      expect(error.message).toContain(code);
    });

    it('maps another 400 INVALID_ARGUMENT to a non-retryable ProviderError', async () => {
      suite.emulator.server.failNext(400, { body: geminiError(400, 'INVALID_ARGUMENT', 'bad') });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(400);
    });

    it('maps malformed JSON to InvalidResponseError', async () => {
      suite.emulator.server.malformedNext();
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
    });

    it('maps a 200 without candidates, or a candidate without parts, to InvalidResponseError', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { candidates: [] } });
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { candidates: [{ content: { role: 'model' } }] } });
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
    });

    it('refuses to start without an API key', () => {
      expect(() => create({ apiKey: undefined })).toThrow(TollgateError);
    });
  });

  describe('the emulator rejects malformed requests like the real API', () => {
    const post = (path: string, body: unknown, key = GEMINI_EMULATOR_KEY) =>
      fetch(`${suite.emulator.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
        body: JSON.stringify(body),
      });

    it('400 INVALID_ARGUMENT on empty contents', async () => {
      const response = await post('/models/gemini-2.5-flash:generateContent', { contents: [] });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    });

    it('400 INVALID_ARGUMENT on an unknown generationConfig field', async () => {
      const response = await post('/models/gemini-2.5-flash:generateContent', {
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
        generationConfig: { max_tokens: 5 },
      });
      expect(response.status).toBe(400);
    });

    it('400 API_KEY_INVALID for a wrong key', async () => {
      const response = await post('/models/gemini-2.5-flash:generateContent', {}, 'wrong');
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { details: [{ reason: 'API_KEY_INVALID' }] } });
    });

    it('streams a JSON array without alt=sse', async () => {
      const response = await post('/models/gemini-2.5-flash:streamGenerateContent', {
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      });
      expect(Array.isArray(await response.json())).toBe(true);
    });

    it('400 when a batch request names another model', async () => {
      const response = await post('/models/gemini-embedding-001:batchEmbedContents', {
        requests: [{ model: 'models/other', content: { parts: [{ text: 'a' }] } }],
      });
      expect(response.status).toBe(400);
    });
  });

  it('describes itself without the API key', () => {
    const described = create({ chatModel: 'models/gemini-2.5-pro' }).describe();
    expect(JSON.stringify(described)).not.toContain(GEMINI_EMULATOR_KEY);
    expect(described).toMatchObject({
      kind: 'gemini',
      chatModel: 'gemini-2.5-pro',
      embeddingModel: 'gemini-embedding-001',
    });
  });

  describeSharedProviderBehaviour(suite, GeminiProvider, { embeds: true });
});
