import { OllamaProvider } from '../../src/ai/providers/ollama/ollama.provider';
import {
  InvalidRequestError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  RateLimitError,
  TollgateError,
} from '../../src/ai/errors';
import {
  OLLAMA_BODY_MARKER,
  ollamaError,
  startOllamaEmulator,
  vectorFor,
} from '../emulators/ollama-emulator';
import { collect, expectSanitized, imageInlinerOf } from '../support/provider-specs';
import { describeSharedProviderBehaviour, providerSuite } from '../support/provider-suite';

describe('OllamaProvider against the Ollama emulator', () => {
  const suite = providerSuite({
    start: () => startOllamaEmulator(),
    build: (settings) => new OllamaProvider(settings),
    settings: (emulator) => ({ name: 'ollama', kind: 'ollama', url: emulator.url, timeoutMs: 2000 }),
    secrets: [OLLAMA_BODY_MARKER],
    resetOptions: (emulator) => {
      emulator.options.streamError = undefined;
      emulator.options.dimensions = 6;
      emulator.options.toolCalls = undefined;
      emulator.options.doneReason = undefined;
    },
  });
  const { create, secrets, ask } = suite;

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
      const sent = suite.emulator.server.requestsTo('/api/chat');
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
      expect(suite.emulator.server.lastRequest?.body).toEqual({
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
      expect(suite.emulator.server.requests).toHaveLength(0);
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
      expect(suite.emulator.server.lastRequest?.body).toMatchObject({ stream: true });
    });

    it('turns an error line after the 200 into a ProviderError', async () => {
      suite.emulator.options.streamError = true;
      await expectSanitized(collect(create().generateStream(ask)), ProviderError, secrets);
    });

    it('refuses a stream that ends before done, or a line that is not an object', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: '{"message":{"content":"partial"},"done":false}\n' });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
      suite.emulator.server.inject({ kind: 'status', status: 200, body: '["not an object"]\n' });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
      suite.emulator.server.inject({ kind: 'status', status: 200, body: `{"done": ${OLLAMA_BODY_MARKER}\n` });
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

  describe('tools, images and structured output', () => {
    const weather = {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    };
    const twoCalls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: {} },
    ];

    it('sends tools in Ollama\'s shape and answers its tool_calls with made ids and finish reason tool_calls', async () => {
      suite.emulator.options.toolCalls = twoCalls;
      const result = await create().generate({ messages: [{ role: 'user', content: 'Weather?' }], tools: [weather] });

      expect(result.finishReason).toBe('tool_calls');
      expect(result.toolCalls).toEqual([
        { id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_1', name: 'get_weather', arguments: '{}' },
      ]);
      expect(suite.emulator.server.lastRequest?.body).toMatchObject({
        tools: [{ type: 'function', function: weather }],
      });
    });

    it('streams each tool call as one delta with its own index, then finish reason tool_calls', async () => {
      suite.emulator.options.toolCalls = twoCalls;
      const chunks = await collect(
        create().generateStream!({ messages: [{ role: 'user', content: 'Weather?' }], tools: [weather] }),
      );

      expect(chunks.filter((c) => !c.done)).toEqual([
        { done: false, text: '', toolCalls: [{ index: 0, id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { done: false, text: '', toolCalls: [{ index: 1, id: 'call_1', name: 'get_weather', arguments: '{}' }] },
      ]);
      expect(chunks[chunks.length - 1]).toMatchObject({ done: true, finishReason: 'tool_calls' });
    });

    it('sends a tool round trip: assistant tool_calls with object arguments, the result with tool_name', async () => {
      await create().generate({
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          { role: 'tool', toolCallId: 'call_0', content: '{"error":"city not found"}' },
        ],
        tools: [weather],
      });

      expect(suite.emulator.server.lastRequest?.body).toMatchObject({
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
          { role: 'tool', content: '{"error":"city not found"}', tool_name: 'get_weather' },
        ],
      });
    });

    it('sends format, seed and penalties, and base64 images on the message', async () => {
      const schema = { type: 'object', properties: { answer: { type: 'string' } } };
      await create().generate({
        model: 'qwen2.5:7b',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
            ],
          },
        ],
        responseFormat: { type: 'json_schema', name: 'answer', schema },
        seed: 7,
        frequencyPenalty: 0.5,
        presencePenalty: 0,
      });

      expect(suite.emulator.server.lastRequest?.body).toEqual({
        model: 'qwen2.5:7b',
        messages: [{ role: 'user', content: 'What is this?', images: ['iVBORw0KGgo='] }],
        stream: false,
        format: schema,
        options: { seed: 7, frequency_penalty: 0.5, presence_penalty: 0 },
      });
    });

    it('maps done_reason length', async () => {
      suite.emulator.options.doneReason = 'length';
      const result = await create().generate({ messages: [{ role: 'user', content: 'Hi' }], maxTokens: 1 });
      expect(result.finishReason).toBe('length');
    });

    it('refuses what Ollama cannot express, naming the parameter, before any request', async () => {
      const provider = create();
      const messages = [{ role: 'user' as const, content: 'Hi' }];
      await expect(provider.generate({ messages, tools: [weather], toolChoice: 'required' })).rejects.toThrow(/tool_choice/);
      await expect(provider.generate({ messages, tools: [weather], parallelToolCalls: false })).rejects.toThrow(
        /parallel_tool_calls/,
      );
      expect(suite.emulator.server.requestsTo('/api/chat')).toHaveLength(0);
    });

    it('fetches an image URL and sends its bytes, as Ollama takes images', async () => {
      const fetched: string[] = [];
      const provider = new OllamaProvider(suite.settings(), imageInlinerOf(async (url) => {
        fetched.push(url);
        return { mediaType: 'image/png', data: 'iVBORw0KGgo=' };
      }));
      try {
        const content = [
          { type: 'text' as const, text: 'What is this?' },
          { type: 'image' as const, image: { kind: 'url' as const, url: 'https://images.example/cat.png' } },
        ];
        await provider.generate({ messages: [{ role: 'user', content }] });
      } finally {
        await provider.close();
      }
      expect(fetched).toEqual(['https://images.example/cat.png']);
      expect(suite.emulator.server.lastRequest?.body).toMatchObject({ messages: [{ role: 'user', content: 'What is this?', images: ['iVBORw0KGgo='] }] });
    });

    it('refuses an image URL on a private address through the URL guard, without calling upstream', async () => {
      const provider = create();
      const image = { type: 'image' as const, image: { kind: 'url' as const, url: 'http://10.1.2.3/secret.png' } };
      await expect(provider.generate({ messages: [{ role: 'user', content: [image] }] })).rejects.toThrow(/10\.1\.2\.3/);
      expect(suite.emulator.server.requests).toHaveLength(0);
    });

    it('tells vision model families apart', () => {
      const provider = create();
      expect(provider.supportsFeature('vision', 'llava:13b')).toBe(true);
      expect(provider.supportsFeature('vision', 'llama3.2-vision')).toBe(true);
      expect(provider.supportsFeature('vision', 'gemma3:4b')).toBe(true);
      expect(provider.supportsFeature('vision', 'llama3.2')).toBe(false);
      expect(provider.supportsFeature('vision', undefined)).toBe(false);
      expect(provider.supportsFeature('tools', 'llama3.2')).toBe(true);
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
      expect(suite.emulator.server.lastRequest?.path).toBe('/api/embed');
      expect(suite.emulator.server.lastRequest?.body).toEqual({ model: 'nomic-embed-text', input: ['alpha'] });
    });

    it('embeds a batch in ONE upstream call, in input order', async () => {
      const inputs = ['one', 'two', 'three', 'four'];
      const result = await create().embed({ inputs });
      expect(result.embeddings).toEqual(inputs.map((t) => vectorFor(t, 6)));
      expect(suite.emulator.server.requestsTo('/api/embed')).toHaveLength(1);
    });

    it('accepts vectors of the configured dimension', async () => {
      const result = await create({ embeddingDimensions: 6 }).embed({ inputs: ['a', 'b'] });
      expect(result.embeddings.map((v) => v.length)).toEqual([6, 6]);
    });

    it('refuses vectors of another length instead of padding or truncating them', async () => {
      suite.emulator.options.dimensions = 5;
      const error = await expectSanitized(
        create({ embeddingDimensions: 6 }).embed({ inputs: ['a'] }),
        InvalidResponseError,
        secrets,
      );
      expect(error.message).toContain('5-dimension embeddings, expected 6');
    });

    it('refuses a response with a missing or extra vector', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { embeddings: [[0.1], [0.2]] } });
      await expectSanitized(create().embed({ inputs: ['a'] }), InvalidResponseError, secrets);
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { model: 'x' } });
      await expectSanitized(create().embed({ inputs: ['a'] }), InvalidResponseError, secrets);
    });

    it('refuses an empty vector', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { embeddings: [[]] } });
      await expectSanitized(create().embed({ inputs: ['a'] }), InvalidResponseError, secrets);
    });

    it('refuses an empty batch without calling upstream', async () => {
      await expectSanitized(create().embed({ inputs: [] }), InvalidRequestError, secrets);
      expect(suite.emulator.server.requests).toHaveLength(0);
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
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { tags: [] } });
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
      suite.emulator.server.failNext(500, { body: ollamaError('boom') });
      const health = await create().healthCheck();
      expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
      expect(health.error).not.toContain(OLLAMA_BODY_MARKER);
    });

  });

  describe('errors', () => {
    it('maps 400 to a non-retryable ProviderError', async () => {
      suite.emulator.server.failNext(400, { body: ollamaError('invalid options') });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(400);
    });

    it.each([500, 503])('maps %i to ProviderError with the status', async (status) => {
      suite.emulator.server.failNext(status, { body: ollamaError('server busy') });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(status);
    });

    it('maps 429 with Retry-After to RateLimitError', async () => {
      suite.emulator.server.rateLimitNext('2', { body: ollamaError('too many requests') });
      const error = await expectSanitized(create().embed({ inputs: ['a'] }), RateLimitError, secrets);
      expect(error.retryAfterMs).toBe(2000);
    });

    it('maps malformed JSON to InvalidResponseError', async () => {
      suite.emulator.server.malformedNext();
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
    });

    it('maps a 200 without message content to InvalidResponseError', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { done: true } });
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
    });
  });

  describe('the emulator speaks Ollama', () => {
    const post = (path: string, body: unknown) =>
      fetch(`${suite.emulator.url}${path}`, { method: 'POST', body: JSON.stringify(body) });

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
    const provider = create({ name: 'local', url: undefined, timeoutMs: 30000 });
    expect(provider.describe()).toEqual({
      name: 'local',
      kind: 'ollama',
      url: 'http://localhost:11434',
      chatModel: 'llama3.2',
      embeddingModel: 'nomic-embed-text',
      timeoutMs: 30000,
      capabilities: { generate: true, embeddings: true, batchEmbeddings: true, streaming: true, listModels: true, tools: true, structuredOutput: true, vision: true },
    });
  });

  describeSharedProviderBehaviour(suite, OllamaProvider, { embeds: true });
});
