import { AiClient } from '../../src/ai/client/ai-client';
import { ProviderRegistry } from '../../src/ai/client/provider-registry';
import { GeminiProvider } from '../../src/ai/providers/gemini/gemini.provider';
import type { ChatMessage, ToolDefinition } from '../../src/ai/providers/ai-provider.interface';
import { DEFAULT_PROMPT_TEMPLATES } from '../../src/ai/prompts/prompt-templates';
import {
  AuthenticationError,
  CapabilityNotSupportedError,
  InvalidRequestError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  RateLimitError,
  TollgateError,
} from '../../src/ai/errors';
import {
  EMULATOR_THOUGHT_SIGNATURE,
  GEMINI_BODY_MARKER,
  GEMINI_EMULATOR_KEY,
  geminiError,
  startGeminiEmulator,
  vectorFor,
} from '../emulators/gemini-emulator';
import { collect, expectSanitized, imageInlinerOf } from '../support/provider-specs';
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

  describe('tools, images and structured output through the AiClient', () => {
    const weather: ToolDefinition = {
      name: 'get_weather',
      description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    };
    const clock: ToolDefinition = { name: 'get_time', parameters: { type: 'object', properties: {} } };
    const clients: AiClient[] = [];
    afterEach(async () => {
      suite.emulator.options.functionCalls = undefined;
      suite.emulator.options.signFunctionCalls = undefined;
      await Promise.all(clients.splice(0).map((client) => client.close()));
    });
    const client = (): AiClient => {
      const created = new AiClient(ProviderRegistry.fromSettings([suite.settings()]), {
        defaultProvider: 'gemini',
        retry: { retries: 0, baseDelayMs: 1 },
        fallback: { enabled: false },
        prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
        context: { excludedFields: [], sensitiveKeys: [] },
        sensitiveKeys: [],
        limits: { maxBatchInputs: 4 },
        healthCacheMs: 5000,
      });
      clients.push(created);
      return created;
    };
    const upstreamBody = () => suite.emulator.server.lastRequest?.body as Record<string, unknown>;
    const question: ChatMessage[] = [{ role: 'user', content: 'Weather in Paris?' }];

    it('declares tools with their JSON Schema and maps a named tool choice; the call comes back with an id and tool_calls', async () => {
      const answer = await client().generateMessages(question, { tools: [weather, clock], toolChoice: { name: 'get_weather' } });
      expect(upstreamBody()).toEqual({
        contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
        tools: [
          {
            functionDeclarations: [
              { name: 'get_weather', description: 'Current weather of a city', parametersJsonSchema: weather.parameters },
              { name: 'get_time', parametersJsonSchema: clock.parameters },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      });
      expect(answer).toMatchObject({
        response: '',
        finishReason: 'tool_calls',
        toolCalls: [{ id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'get_weather', arguments: '{"city":"emulated"}' }],
      });
    });

    it('sends two calls and their results back as functionCall and grouped functionResponse parts, then gets text', async () => {
      const messages: ChatMessage[] = [
        ...question,
        {
          role: 'assistant',
          content: null,
          toolCalls: [
            { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { id: 'call_2', name: 'get_time', arguments: '' },
          ],
        },
        { role: 'tool', toolCallId: 'call_1', content: '{"temperature":21}' },
        { role: 'tool', toolCallId: 'call_2', content: 'error: clock offline', isError: true },
      ];
      const answer = await client().generateMessages(messages, { tools: [weather, clock] });
      expect(upstreamBody().contents).toEqual([
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }] },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temperature: 21 } } },
            { functionResponse: { name: 'get_time', response: { error: 'error: clock offline' } } },
          ],
        },
      ]);
      expect(answer).toMatchObject({ response: 'Hello from the Gemini emulator', finishReason: 'stop' });
      expect(answer.toolCalls).toBeUndefined();
    });

    it('streams two functionCall parts as two whole deltas with distinct ids, then tool_calls', async () => {
      suite.emulator.options.functionCalls = [
        { name: 'get_weather', args: { city: 'Paris' } },
        { name: 'get_time', args: {} },
      ];
      const events = await collect(client().streamMessages(question, { tools: [weather, clock], toolChoice: 'required' }));
      expect(suite.emulator.server.lastRequest?.query.get('alt')).toBe('sse');
      expect(upstreamBody().toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
      expect(events).toEqual([
        { type: 'delta', text: '', toolCalls: [{ index: 0, id: expect.stringMatching(/^call_/), name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { type: 'delta', text: '', toolCalls: [{ index: 1, id: expect.stringMatching(/^call_/), name: 'get_time', arguments: '{}' }] },
        expect.objectContaining({ type: 'done', provider: 'gemini', finishReason: 'tool_calls' }),
      ]);
    });

    it('sends a json_schema response format as responseMimeType and responseJsonSchema, and the answer parses', async () => {
      const schema = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] };
      const answer = await client().generateMessages(question, {
        responseFormat: { type: 'json_schema', name: 'weather', schema, strict: true },
        seed: 7,
        presencePenalty: 0,
        frequencyPenalty: 0.5,
      });
      expect(upstreamBody().generationConfig).toEqual({
        seed: 7,
        frequencyPenalty: 0.5,
        responseMimeType: 'application/json',
        responseJsonSchema: schema,
      });
      expect(JSON.parse(answer.response)).toEqual({ city: 'emulated', celsius: 1 });
    });

    it('sends a json_object response format as responseMimeType only', async () => {
      const answer = await client().generateMessages(question, { responseFormat: { type: 'json_object' } });
      expect(upstreamBody().generationConfig).toEqual({ responseMimeType: 'application/json' });
      expect(JSON.parse(answer.response)).toEqual({ reply: 'Hello from the Gemini emulator' });
    });

    it('sends a base64 image as inlineData', async () => {
      await client().generateMessages([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==' } },
          ],
        },
      ]);
      expect(upstreamBody().contents).toEqual([
        {
          role: 'user',
          parts: [
            { text: 'What is this?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==' } },
          ],
        },
      ]);
    });

    it('fetches an image URL and inlines its bytes', async () => {
      const fetched: string[] = [];
      const provider = new GeminiProvider(suite.settings(), imageInlinerOf(async (url) => {
        fetched.push(url);
        return { mediaType: 'image/jpeg', data: '/9j/4AAQSkZJRg==' };
      }));
      try {
        await provider.generate({ messages: [{ role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'https://images.example/cat.jpg' } }] }] });
      } finally {
        await provider.close();
      }
      expect(fetched).toEqual(['https://images.example/cat.jpg']);
      expect(upstreamBody().contents).toEqual([{ role: 'user', parts: [{ inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } }] }]);
    });

    it('refuses an image URL on a private address through the URL guard, without calling upstream', async () => {
      const image: ChatMessage = { role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'http://10.1.2.3/secret.png' } }] };
      await expectSanitized(client().generateMessages([image]), InvalidRequestError, secrets);
      expect(suite.emulator.server.requests).toHaveLength(0);
    });

    it('refuses parallel_tool_calls false and a model family without tools, without calling upstream', async () => {
      const refused = await expectSanitized(client().generateMessages(question, { tools: [weather], parallelToolCalls: false }), InvalidRequestError, secrets);
      expect(refused.message).toContain('parallel_tool_calls');
      await expectSanitized(client().generateMessages(question, { tools: [weather], model: 'gemini/gemini-1.0-pro' }), CapabilityNotSupportedError, secrets);
      expect(suite.emulator.server.requests).toHaveLength(0);
    });

    it("carries a Gemini 3 thought signature in the call id and gives it back on the replayed call turn", async () => {
      suite.emulator.options.signFunctionCalls = true;
      suite.emulator.options.functionCalls = [{ name: 'get_weather', args: { city: 'Paris' } }, { name: 'get_time' }];
      const first = await client().generateMessages(question, { tools: [weather, clock] });
      const calls = first.toolCalls ?? [];
      expect(calls.map((call) => call.id)).toEqual([
        expect.stringMatching(new RegExp(`^call_[0-9a-f]{24}__thought__${EMULATOR_THOUGHT_SIGNATURE.replace(/[+/=]/g, '\\$&')}$`)),
        expect.stringMatching(/^call_[0-9a-f]{24}$/),
      ]);
      const second = await client().generateMessages(
        [
          ...question,
          { role: 'assistant', content: null, toolCalls: calls },
          { role: 'tool', toolCallId: calls[0].id, content: '{"temperature":21}' },
          { role: 'tool', toolCallId: calls[1].id, content: '12:00' },
        ],
        { tools: [weather, clock] },
      );
      expect((upstreamBody().contents as unknown[])[1]).toEqual({
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: EMULATOR_THOUGHT_SIGNATURE },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      });
      expect(second).toMatchObject({ response: 'Hello from the Gemini emulator', finishReason: 'stop' });
    });

    it("replays another provider's calls to a Gemini 3 model with Google's placeholder signature", async () => {
      suite.emulator.options.signFunctionCalls = true;
      const chatModels = suite.emulator.options.chatModels;
      suite.emulator.options.chatModels = [...chatModels, 'gemini-3-pro-preview'];
      const foreign = [
        { id: 'toolu_01', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'toolu_02', name: 'get_time', arguments: '{}' },
      ];
      const answer = await client()
        .generateMessages(
          [
            ...question,
            { role: 'assistant', content: null, toolCalls: foreign },
            { role: 'tool', toolCallId: 'toolu_01', content: '{"temperature":21}' },
            { role: 'tool', toolCallId: 'toolu_02', content: '12:00' },
          ],
          { tools: [weather, clock], model: 'gemini/gemini-3-pro-preview' },
        )
        .finally(() => (suite.emulator.options.chatModels = chatModels));
      expect((upstreamBody().contents as unknown[])[1]).toEqual({
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'skip_thought_signature_validator' },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      });
      expect(answer).toMatchObject({ response: 'Hello from the Gemini emulator', finishReason: 'stop' });
    });

    it.each([
      ['gemini-1.5-flash', true],
      ['gemini-2.5-pro', true],
      ['models/gemini-3-pro-preview', true],
      ['gemini-flash-latest', true],
      ['gemini-1.0-pro', false],
      ['gemma-3-27b-it', false],
    ])('model %s has tools, structured output and vision: %s', (model, expected) => {
      const provider = create();
      expect(['tools', 'structuredOutput', 'vision'].map((feature) => provider.supportsFeature(feature as 'tools', model))).toEqual([expected, expected, expected]);
    });

    it('answers text when tool choice is none', async () => {
      const answer = await client().generateMessages(question, { tools: [weather], toolChoice: 'none' });
      expect(upstreamBody().toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
      expect(answer).toMatchObject({ response: 'Hello from the Gemini emulator', finishReason: 'stop' });
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

    it('400 when function responses do not answer the function call turn right before, part for part', async () => {
      const call = { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'g', args: {} } }] };
      const oneResult = { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] };
      const ask = { role: 'user', parts: [{ text: 'Hi' }] };
      const tooFew = await post('/models/gemini-2.5-flash:generateContent', { contents: [ask, call, oneResult] });
      expect(tooFew.status).toBe(400);
      const orphan = await post('/models/gemini-2.5-flash:generateContent', { contents: [ask, oneResult] });
      expect(orphan.status).toBe(400);
    });

    it('400 on parameters together with parametersJsonSchema, or allowedFunctionNames outside ANY', async () => {
      const contents = [{ role: 'user', parts: [{ text: 'Hi' }] }];
      const both = await post('/models/gemini-2.5-flash:generateContent', {
        contents,
        tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT' }, parametersJsonSchema: { type: 'object' } }] }],
      });
      expect(both.status).toBe(400);
      const names = await post('/models/gemini-2.5-flash:generateContent', {
        contents,
        tools: [{ functionDeclarations: [{ name: 'f' }] }],
        toolConfig: { functionCallingConfig: { mode: 'AUTO', allowedFunctionNames: ['f'] } },
      });
      expect(names.status).toBe(400);
    });

    it('400 for an unsigned replayed function call when behaving like Gemini 3', async () => {
      suite.emulator.options.signFunctionCalls = true;
      const response = await post('/models/gemini-2.5-flash:generateContent', {
        contents: [
          { role: 'user', parts: [{ text: 'Hi' }] },
          { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] },
        ],
      });
      suite.emulator.options.signFunctionCalls = undefined;
      expect(response.status).toBe(400);
      expect(JSON.stringify(await response.json())).toContain('missing a thought_signature');
    });

    it('400 on inlineData that is not base64', async () => {
      const response = await post('/models/gemini-2.5-flash:generateContent', {
        contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'not base64!' } }] }],
      });
      expect(response.status).toBe(400);
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
