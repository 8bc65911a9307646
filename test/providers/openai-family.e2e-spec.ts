/**
 * Every OpenAI-format adapter against the loopback emulator of its flavour: requests as sent, responses as
 * mapped, health, and each error class, with no upstream body or key ever in a message.
 */
import { inspect } from 'node:util';
import type { AiProvider, ProviderKind, ProviderSettings } from '../../src/ai/providers/ai-provider.interface';
import { createProvider } from '../../src/ai/providers/provider-factory';
import {
  AuthenticationError,
  CapabilityNotSupportedError,
  ConnectionError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  RateLimitError,
  TimeoutError,
} from '../../src/ai/errors';
import { OpenAiEmulator, OpenAiFlavour, UPSTREAM_MARKER, vectorFor } from '../emulators/openai-emulator';
import { collect, expectSanitized } from '../support/provider-specs';

const API_KEY = 'sk-test-KEY-MARKER-91c2';
/** What no error message may carry: the upstream body and the key. */
const SECRETS = [UPSTREAM_MARKER, API_KEY];

interface KindCase {
  kind: ProviderKind;
  flavour: OpenAiFlavour;
  embeddings: boolean;
  maxTokensKey: string;
  /** Path the emulator sees for chat, relative to its root. */
  chatPath: string;
  embedPath?: string;
  /** The encoding_format the adapter is expected to send (undefined: key absent). */
  encoding?: 'float' | 'base64';
  /** Whether the chat model of these tests (gpt-test) is taken to read images. */
  vision?: boolean;
}

const CASES: KindCase[] = [
  { kind: 'openai', flavour: 'openai', embeddings: true, maxTokensKey: 'max_completion_tokens', chatPath: '/v1/chat/completions', embedPath: '/v1/embeddings', encoding: 'base64', vision: true },
  { kind: 'mistral', flavour: 'mistral', embeddings: true, maxTokensKey: 'max_tokens', chatPath: '/v1/chat/completions', embedPath: '/v1/embeddings' },
  { kind: 'deepseek', flavour: 'deepseek', embeddings: false, maxTokensKey: 'max_tokens', chatPath: '/chat/completions' },
  { kind: 'xai', flavour: 'xai', embeddings: false, maxTokensKey: 'max_tokens', chatPath: '/v1/chat/completions' },
  {
    kind: 'huggingface',
    flavour: 'huggingface',
    embeddings: true,
    maxTokensKey: 'max_tokens',
    chatPath: '/v1/chat/completions',
    embedPath: '/hf-inference/models/org/embed-test/pipeline/feature-extraction',
  },
  { kind: 'openai_compatible', flavour: 'compatible', embeddings: true, maxTokensKey: 'max_tokens', chatPath: '/v1/chat/completions', embedPath: '/v1/embeddings', encoding: 'float', vision: true },
];

describe.each(CASES)('$kind adapter', (c) => {
  let emulator: OpenAiEmulator;
  let provider: AiProvider;
  const embeddingModel = c.kind === 'huggingface' ? 'org/embed-test' : 'embed-test';

  const settings = (overrides: Partial<ProviderSettings> = {}): ProviderSettings => ({
    name: `my-${c.kind}`,
    kind: c.kind,
    url: emulator.url,
    apiKey: API_KEY,
    chatModel: 'gpt-test',
    embeddingModel,
    timeoutMs: 2000,
    ...overrides,
  });
  const withProvider = async <T>(overrides: Partial<ProviderSettings>, use: (p: AiProvider) => Promise<T>): Promise<T> => {
    const p = createProvider(settings(overrides));
    try {
      return await use(p);
    } finally {
      await p.close();
    }
  };

  beforeAll(async () => {
    emulator = await OpenAiEmulator.start({
      flavour: c.flavour,
      apiKey: API_KEY,
      chatModels: ['gpt-test', 'gpt-alt'],
      embeddingModels: [embeddingModel],
      dimensions: 4,
    });
    provider = createProvider(settings());
  });
  afterEach(() => emulator.server.reset());
  afterAll(async () => {
    await provider.close();
    await emulator.close();
  });

  it('reports its capabilities truthfully', () => {
    expect(provider.capabilities).toEqual({
      generate: true,
      embeddings: c.embeddings,
      batchEmbeddings: c.embeddings,
      streaming: true,
      listModels: true,
      tools: true,
      structuredOutput: true,
      vision: c.vision ?? false,
    });
  });

  describe('generate', () => {
    it('sends the documented body with Bearer auth and maps the completion', async () => {
      const result = await provider.generate({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello' },
        ],
        maxTokens: 50,
        temperature: 0.2,
        topP: 0.9,
        stop: ['END'],
      });
      expect(result).toEqual({
        text: 'echo: hello',
        model: 'gpt-test',
        finishReason: 'stop',
        usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
      });
      expect(emulator.server.requests).toHaveLength(1);
      const sent = emulator.server.lastRequest!;
      expect(sent.method).toBe('POST');
      expect(sent.path).toBe(c.chatPath);
      expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(sent.headers['content-type']).toBe('application/json');
      expect(sent.body).toEqual({
        model: 'gpt-test',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello' },
        ],
        stream: false,
        [c.maxTokensKey]: 50,
        temperature: 0.2,
        top_p: 0.9,
        stop: ['END'],
      });
    });

    it('omits options the caller did not set and honours a model override', async () => {
      const result = await provider.generate({ messages: [{ role: 'user', content: 'x' }], model: 'gpt-alt' });
      expect(result.model).toBe('gpt-alt');
      expect(emulator.server.lastRequest!.body).toEqual({
        model: 'gpt-alt',
        messages: [{ role: 'user', content: 'x' }],
        stream: false,
      });
    });

    it('streams OpenAI-style SSE deltas and ends with one done chunk carrying usage', async () => {
      const pieces: string[] = [];
      let final: unknown;
      for await (const chunk of provider.generateStream!({ messages: [{ role: 'user', content: 'streamed words' }] })) {
        if (chunk.done) final = chunk;
        else pieces.push(chunk.text);
      }
      expect(pieces.join('')).toBe('echo: streamed words');
      expect(pieces.length).toBeGreaterThan(1);
      expect(final).toEqual({
        done: true,
        model: 'gpt-test',
        finishReason: 'stop',
        usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
      });
      const sent = emulator.server.lastRequest!.body as Record<string, unknown>;
      expect(sent.stream).toBe(true);
      // Mistral refuses stream_options (422) and reports usage on its finishing chunk instead.
      expect(sent.stream_options).toEqual(c.kind === 'mistral' ? undefined : { include_usage: true });
    });
  });

  describe('stream failures', () => {
    const hi = { messages: [{ role: 'user' as const, content: 'hi' }] };
    const drain = (p: AiProvider) => collect(p.generateStream!(hi));
    const sse = (frames: string[]) => ({ body: frames.join(''), headers: { 'content-type': 'text/event-stream' } });

    it('maps an error frame after the 200 to ProviderError without its text', async () => {
      emulator.server.failNext(200, sse([
        'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\n',
        `data: {"error":{"message":"overloaded ${UPSTREAM_MARKER}","type":"server_error"}}\n\n`,
      ]));
      await expectSanitized(drain(provider), ProviderError, SECRETS);
    });

    it('rejects a stream that ends without [DONE] or carries a non-JSON frame', async () => {
      emulator.server.failNext(200, sse(['data: {"choices":[{"index":0,"delta":{"content":"cut"}}]}\n\n']));
      await expectSanitized(drain(provider), InvalidResponseError, SECRETS);
      emulator.server.failNext(200, sse([`data: {not json ${UPSTREAM_MARKER}\n\n`]));
      await expectSanitized(drain(provider), InvalidResponseError, SECRETS);
    });

    it('maps a 429 before the stream starts to RateLimitError', async () => {
      emulator.rateLimitNext('1');
      const error = await expectSanitized(drain(provider), RateLimitError, SECRETS);
      expect(error.retryAfterMs).toBe(1000);
    });
  });

  describe('embed', () => {
    if (!c.embeddings) {
      it('refuses embeddings without calling upstream', async () => {
        await expect(provider.embed({ inputs: ['a'] })).rejects.toThrow(CapabilityNotSupportedError);
        expect(emulator.server.requests).toHaveLength(0);
      });
      return;
    }

    it('embeds a single input', async () => {
      const result = await provider.embed({ inputs: ['alpha'] });
      expect(result.embeddings).toEqual([vectorFor('alpha', 4)]);
      expect(result.model).toBe(embeddingModel);
      expect(emulator.server.requests.map((r) => r.path)).toEqual([c.embedPath]);
      expect(emulator.server.lastRequest!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    });

    it('embeds a batch in ONE upstream call, in input order', async () => {
      const inputs = ['one', 'two', 'three'];
      const result = await provider.embed({ inputs });
      expect(result.embeddings).toEqual(inputs.map((t) => vectorFor(t, 4)));
      expect(emulator.server.requests).toHaveLength(1);
      const body = emulator.server.lastRequest!.body as Record<string, unknown>;
      if (c.kind === 'huggingface') {
        expect(body).toEqual({ inputs });
      } else {
        expect(body.input).toEqual(inputs);
        expect(body.encoding_format).toBe(c.encoding);
        expect('encoding_format' in body).toBe(c.encoding !== undefined);
      }
    });

    it('accepts vectors of the configured dimension and rejects any other length', async () => {
      await withProvider({ embeddingDimensions: 4 }, async (p) => {
        expect((await p.embed({ inputs: ['a'] })).embeddings[0]).toHaveLength(4);
      });
      await withProvider({ embeddingDimensions: 8 }, async (p) => {
        const error = await expectSanitized(p.embed({ inputs: ['a', 'b'] }), InvalidResponseError, SECRETS);
        expect(error.message).toContain('expected 8');
      });
    });

    it('rejects a response whose vector count does not match the inputs', async () => {
      const body = c.kind === 'huggingface' ? [[0.1, 0.2, 0.3, 0.4]] : { data: [{ index: 0, embedding: [0.1, 0.2, 0.3, 0.4] }] };
      emulator.server.failNext(200, { body });
      await expectSanitized(provider.embed({ inputs: ['a', 'b'] }), InvalidResponseError, SECRETS);
    });

    it('rejects non-numeric vector values', async () => {
      const body = c.kind === 'huggingface' ? [[0.1, 'x', 0.3, 0.4]] : { data: [{ index: 0, embedding: [0.1, null, 0.3, 0.4] }] };
      emulator.server.failNext(200, { body });
      await expectSanitized(provider.embed({ inputs: ['a'] }), InvalidResponseError, SECRETS);
    });

    it('maps an unknown embedding model to ModelNotAvailableError', async () => {
      await expectSanitized(provider.embed({ inputs: ['a'], model: 'org/nope' }), ModelNotAvailableError, SECRETS);
    });
  });

  describe('models and health', () => {
    it('lists models', async () => {
      const models = await provider.listModels();
      expect(models.map((m) => m.id)).toEqual(expect.arrayContaining(['gpt-test', 'gpt-alt']));
      expect(models[0]).toEqual({ id: 'gpt-test', provider: `my-${c.kind}`, ownedBy: 'emulator' });
    });

    it('is healthy when reachable and the configured model is listed', async () => {
      const health = await provider.healthCheck();
      expect(health).toMatchObject({
        provider: `my-${c.kind}`,
        kind: c.kind,
        status: 'healthy',
        reachable: true,
        ready: true,
        model: 'gpt-test',
      });
      expect(health.latencyMs).toBeGreaterThanOrEqual(0);
    });

    it('is unhealthy when the configured model is missing', async () => {
      const health = await withProvider({ chatModel: 'absent-model' }, (p) => p.healthCheck());
      expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
      expect(health.error).toContain('absent-model');
    });

    it('is unhealthy, not unavailable, when the key is refused', async () => {
      const health = await withProvider({ apiKey: 'wrong' }, (p) => p.healthCheck());
      expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
      expect(health.error).not.toContain(UPSTREAM_MARKER);
    });

    it('is unavailable when the server is down', async () => {
      const down = await OpenAiEmulator.start({ flavour: c.flavour });
      const url = down.url;
      await down.close();
      const health = await withProvider({ url }, (p) => p.healthCheck());
      expect(health).toMatchObject({ status: 'unavailable', reachable: false, ready: false });
      expect(health.error).not.toContain('127.0.0.1');
    });

    it('describes itself without secrets, and keeps the key out of inspection', () => {
      const description = provider.describe();
      expect(description).toMatchObject({ name: `my-${c.kind}`, kind: c.kind, chatModel: 'gpt-test' });
      expect(JSON.stringify(description)).not.toContain(API_KEY);
      expect(inspect(provider, { depth: 6 })).not.toContain(API_KEY);
    });
  });

  describe('errors', () => {
    const hi = { messages: [{ role: 'user' as const, content: 'hi' }] };

    it('maps a refused key to AuthenticationError', async () => {
      await withProvider({ apiKey: 'sk-wrong-KEY-MARKER-91c2' }, async (p) => {
        const error = await expectSanitized(p.generate(hi), AuthenticationError, SECRETS);
        expect(error.message).not.toContain('sk-wrong');
      });
    });

    it('maps 429 to RateLimitError with retryAfterMs from Retry-After', async () => {
      emulator.rateLimitNext('2');
      const error = await expectSanitized(provider.generate(hi), RateLimitError, SECRETS);
      expect(error.retryAfterMs).toBe(2000);
      expect(error.provider).toBe(`my-${c.kind}`);
    });

    it('maps an unknown model to ModelNotAvailableError', async () => {
      const error = await expectSanitized(provider.generate({ ...hi, model: 'no-such-model' }), ModelNotAvailableError, SECRETS);
      expect(error.message).toContain('no-such-model');
    });

    it('maps 5xx to ProviderError with its status', async () => {
      emulator.serverErrorNext(503);
      const error = await expectSanitized(provider.generate(hi), ProviderError, SECRETS);
      expect(error.status).toBe(503);
      expect(error.message).toBe(`my-${c.kind}: upstream returned 503`);
    });

    it('maps malformed JSON to InvalidResponseError', async () => {
      emulator.server.malformedNext();
      await expectSanitized(provider.generate(hi), InvalidResponseError, SECRETS);
    });

    it('maps a well-formed JSON body of the wrong shape to InvalidResponseError', async () => {
      emulator.server.failNext(200, { body: { choices: [], note: UPSTREAM_MARKER } });
      await expectSanitized(provider.generate(hi), InvalidResponseError, SECRETS);
    });

    it('maps a connection reset to ConnectionError', async () => {
      emulator.server.resetNext();
      const error = await expectSanitized(provider.generate(hi), ConnectionError, SECRETS);
      expect(error).not.toBeInstanceOf(TimeoutError);
    });

    it('maps a slow upstream to TimeoutError and disconnects from it', async () => {
      emulator.server.delayNext(5000);
      await withProvider({ timeoutMs: 100 }, async (p) => {
        await expectSanitized(p.generate(hi), TimeoutError, SECRETS);
      });
      await emulator.server.waitForAbort();
      expect(emulator.server.lastRequest!.aborted).toBe(true);
    });

    it("hands back the caller's abort reason and disconnects", async () => {
      emulator.server.delayNext(5000);
      const controller = new AbortController();
      const pending = provider.generate({ ...hi, signal: controller.signal });
      setTimeout(() => controller.abort(new Error('caller gave up')), 50);
      await expect(pending).rejects.toThrow('caller gave up');
      await emulator.server.waitForAbort();
    });

    it('maps a 400 for a malformed request to ProviderError 400', async () => {
      emulator.server.failNext(400, {
        body: { error: { message: `Missing messages ${UPSTREAM_MARKER}`, type: 'invalid_request_error', param: 'messages', code: null } },
      });
      const error = await expectSanitized(provider.generate(hi), ProviderError, SECRETS);
      expect(error.status).toBe(400);
    });
  });
});

describe('openai_compatible without a key', () => {
  it('sends no Authorization header and requires a url', async () => {
    const emulator = await OpenAiEmulator.start({ flavour: 'compatible', chatModels: ['local'] });
    const provider = createProvider({ name: 'vllm', kind: 'openai_compatible', url: emulator.url, chatModel: 'local', timeoutMs: 2000 });
    try {
      expect((await provider.generate({ messages: [{ role: 'user', content: 'q' }] })).text).toBe('echo: q');
      expect(emulator.server.lastRequest!.headers.authorization).toBeUndefined();
      expect(() => createProvider({ name: 'x', kind: 'openai_compatible', timeoutMs: 1000 })).toThrow('url is required');
    } finally {
      await provider.close();
      await emulator.close();
    }
  });
});

describe('two registrations of one kind', () => {
  it('keep their own URLs, keys and pools', async () => {
    const a = await OpenAiEmulator.start({ apiKey: 'key-a', chatModels: ['m'] });
    const b = await OpenAiEmulator.start({ apiKey: 'key-b', chatModels: ['m'] });
    const pa = createProvider({ name: 'a', kind: 'openai', url: a.url, apiKey: 'key-a', chatModel: 'm', timeoutMs: 2000 });
    const pb = createProvider({ name: 'b', kind: 'openai', url: b.url, apiKey: 'key-b', chatModel: 'm', timeoutMs: 2000 });
    try {
      const hi = { messages: [{ role: 'user' as const, content: 'hi' }] };
      await Promise.all([pa.generate(hi), pb.generate(hi), pa.generate(hi)]);
      expect(a.server.requests).toHaveLength(2);
      expect(b.server.requests).toHaveLength(1);
      await pa.close();
      // Closing one registration leaves the other working.
      expect((await pb.generate(hi)).text).toBe('echo: hi');
    } finally {
      await pb.close();
      await a.close();
      await b.close();
    }
  });
});

describe('OpenAI emulator wire conformance', () => {
  let openai: OpenAiEmulator;
  let mistral: OpenAiEmulator;
  // Loose typing on purpose: these tests probe the raw wire shape.
  const json = (response: Response): Promise<any> => response.json();
  const post = (url: string, body: unknown, key = 'k') =>
    fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    openai = await OpenAiEmulator.start({ apiKey: 'k', dimensions: 3 });
    mistral = await OpenAiEmulator.start({ flavour: 'mistral', apiKey: 'k', chatModels: ['m'] });
  });
  afterAll(async () => {
    await openai.close();
    await mistral.close();
  });

  it('answers a bad key with 401 and the OpenAI error object', async () => {
    const response = await post(`${openai.url}/chat/completions`, { model: 'gpt-test', messages: [] }, 'bad');
    expect(response.status).toBe(401);
    expect((await json(response)).error).toEqual(expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_api_key', param: null }));
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('60');
  });

  it('rejects a request without messages or model with 400 naming the param', async () => {
    const noMessages = await post(`${openai.url}/chat/completions`, { model: 'gpt-test' });
    expect(noMessages.status).toBe(400);
    expect((await json(noMessages)).error.param).toBe('messages');
    const noModel = await post(`${openai.url}/chat/completions`, { messages: [{ role: 'user', content: 'x' }] });
    expect((await json(noModel)).error.param).toBe('model');
  });

  it('serves the same embedding as float list and as base64 float32', async () => {
    const float = await json(await post(`${openai.url}/embeddings`, { model: 'embed-test', input: 'z', encoding_format: 'float' }));
    const b64 = await json(await post(`${openai.url}/embeddings`, { model: 'embed-test', input: 'z', encoding_format: 'base64' }));
    const bytes = Buffer.from(b64.data[0].embedding, 'base64');
    const decoded = [0, 1, 2].map((i) => bytes.readFloatLE(i * 4));
    expect(float.data[0].embedding).toEqual(vectorFor('z', 3));
    expect(decoded).toEqual(vectorFor('z', 3));
  });

  it('answers an unknown model with 404 model_not_found', async () => {
    const response = await post(`${openai.url}/chat/completions`, { model: 'nope', messages: [{ role: 'user', content: 'x' }] });
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('model_not_found');
  });

  it('mistral refuses undocumented keys with 422 extra_forbidden', async () => {
    const response = await post(`${mistral.url}/chat/completions`, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      max_completion_tokens: 5,
    });
    expect(response.status).toBe(422);
    expect((await json(response)).message.detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'max_completion_tokens'] });
  });
});

describe('huggingface router url', () => {
  it('works whether the url is given with or without /v1', async () => {
    const emulator = await OpenAiEmulator.start({ flavour: 'huggingface', apiKey: 'hf_k', chatModels: ['c'], embeddingModels: ['e'] });
    try {
      for (const url of [emulator.url, emulator.server.url]) {
        const provider = createProvider({ name: 'hf', kind: 'huggingface', url, apiKey: 'hf_k', chatModel: 'c', embeddingModel: 'e', timeoutMs: 2000 });
        try {
          expect((await provider.generate({ messages: [{ role: 'user', content: 'q' }] })).text).toBe('echo: q');
          expect((await provider.embed({ inputs: ['a'] })).embeddings).toEqual([vectorFor('a', 4)]);
        } finally {
          await provider.close();
        }
      }
      expect(emulator.server.requests.map((r) => r.path)).toEqual([
        '/v1/chat/completions',
        '/hf-inference/models/e/pipeline/feature-extraction',
        '/v1/chat/completions',
        '/hf-inference/models/e/pipeline/feature-extraction',
      ]);
    } finally {
      await emulator.close();
    }
  });
});
