import {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  ANTHROPIC_VERSION,
  AnthropicProvider,
} from '../../src/ai/providers/anthropic/anthropic.provider';
import { toClientOptions } from '../../src/ai/ai.module';
import { AiClient, type GenerateStreamEvent } from '../../src/ai/client/ai-client';
import { ProviderRegistry } from '../../src/ai/client/provider-registry';
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
  ANTHROPIC_BODY_MARKER,
  ANTHROPIC_EMULATOR_KEY,
  anthropicError,
  startAnthropicEmulator,
} from '../emulators/anthropic-emulator';
import { collect, expectSanitized } from '../support/provider-specs';
import { describeSharedProviderBehaviour, providerSuite } from '../support/provider-suite';

describe('AnthropicProvider against the Anthropic emulator', () => {
  const suite = providerSuite({
    start: () => startAnthropicEmulator(),
    build: (settings) => new AnthropicProvider(settings),
    settings: (emulator) => ({ name: 'anthropic', kind: 'anthropic', url: emulator.url, apiKey: ANTHROPIC_EMULATOR_KEY, timeoutMs: 2000 }),
    secrets: [ANTHROPIC_BODY_MARKER, ANTHROPIC_EMULATOR_KEY],
    resetOptions: (emulator) => {
      emulator.options.streamError = undefined;
    },
  });
  const { create, secrets, ask } = suite;

  describe('generate', () => {
    it('puts system messages in the top-level system field and applies the max_tokens default', async () => {
      const result = await create().generate({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
          { role: 'user', content: 'Again' },
        ],
      });

      expect(result).toEqual({
        text: 'Hello from the Anthropic emulator',
        model: 'claude-sonnet-4-5',
        finishReason: 'stop',
        usage: { inputTokens: expect.any(Number), outputTokens: 5, totalTokens: expect.any(Number) },
      });
      const sent = suite.emulator.server.requestsTo('/v1/messages');
      expect(sent).toHaveLength(1);
      expect(sent[0].headers['x-api-key']).toBe(ANTHROPIC_EMULATOR_KEY);
      expect(sent[0].headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
      expect(sent[0].headers['content-type']).toBe('application/json');
      expect(sent[0].headers.authorization).toBeUndefined();
      // Exact body: no sampling parameters were given, so none are sent.
      expect(sent[0].body).toEqual({
        model: 'claude-sonnet-4-5',
        max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
        system: 'Be brief.',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
          { role: 'user', content: 'Again' },
        ],
      });
    });

    it('maps the given options and a per-call model', async () => {
      await create({ chatModel: 'claude-haiku-4-5' }).generate({
        ...ask,
        model: 'claude-opus-4-1',
        maxTokens: 50,
        temperature: 0.2,
        topP: 0.9,
        stop: ['END'],
      });
      expect(suite.emulator.server.lastRequest?.body).toEqual({
        model: 'claude-opus-4-1',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Hi' }],
        temperature: 0.2,
        top_p: 0.9,
        stop_sequences: ['END'],
      });
    });

    it('joins several system messages and uses the configured chat model', async () => {
      await create({ chatModel: 'claude-haiku-4-5' }).generate({
        messages: [
          { role: 'system', content: 'One.' },
          { role: 'system', content: 'Two.' },
          { role: 'user', content: 'Hi' },
        ],
      });
      const body = suite.emulator.server.lastRequest?.body as Record<string, unknown>;
      expect(body.system).toBe('One.\n\nTwo.');
      expect(body.model).toBe('claude-haiku-4-5');
    });

    it('refuses a request with only system messages without calling upstream', async () => {
      await expectSanitized(
        create().generate({ messages: [{ role: 'system', content: 'x' }] }),
        InvalidRequestError,
        secrets,
      );
      expect(suite.emulator.server.requests).toHaveLength(0);
    });

    it('streams text deltas and one final chunk', async () => {
      const chunks = await collect(create().generateStream({ ...ask, maxTokens: 10 }));

      expect(
        chunks
          .filter((c) => !c.done)
          .map((c) => (c as { text: string }).text)
          .join(''),
      ).toBe('Hello from the Anthropic emulator');
      expect(chunks[chunks.length - 1]).toEqual({
        done: true,
        model: 'claude-sonnet-4-5',
        finishReason: 'stop',
        usage: { inputTokens: expect.any(Number), outputTokens: 5, totalTokens: expect.any(Number) },
      });
      expect(suite.emulator.server.lastRequest?.body).toMatchObject({ stream: true, max_tokens: 10 });
      expect(suite.emulator.server.lastRequest?.headers.accept).toBe('text/event-stream');
    });

    it('refuses a stream that ends before message_stop, or a malformed event', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: 'event: ping\ndata: {"type":"ping"}\n\n' });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
      suite.emulator.server.inject({
        kind: 'status',
        status: 200,
        body: `event: message_start\ndata: {${ANTHROPIC_BODY_MARKER}\n\n`,
      });
      await expectSanitized(collect(create().generateStream(ask)), InvalidResponseError, secrets);
    });

    it('turns a mid-stream overloaded error event into a ProviderError', async () => {
      suite.emulator.options.streamError = 'overloaded_error';
      const error = await expectSanitized(collect(create().generateStream(ask)), ProviderError, secrets);
      expect(error.status).toBe(529);
    });
  });

  describe('tools, images and JSON output through the AiClient', () => {
    const clients: AiClient[] = [];
    const client = (chatModel = 'claude-sonnet-4-5') => {
      const providers = [{ ...suite.settings(), chatModel }];
      const built = new AiClient(ProviderRegistry.fromSettings(providers), toClientOptions({ providers, retryAttempts: 0 }));
      clients.push(built);
      return built;
    };
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    });
    const weather = {
      name: 'get_weather',
      description: 'Current weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    };
    const clock = { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } };
    const sentBody = () => suite.emulator.server.lastRequest?.body as Record<string, unknown>;

    it('runs a tools loop: two tool_use calls, then one user turn with both tool_result blocks', async () => {
      const ai = client();
      const first = await ai.generateMessages([{ role: 'user', content: 'Weather and time in Paris?' }], {
        tools: [weather, clock],
        toolChoice: 'auto',
      });
      expect(sentBody()).toMatchObject({
        tools: [
          { name: 'get_weather', description: 'Current weather', input_schema: weather.parameters },
          { name: 'get_time', input_schema: clock.parameters },
        ],
        tool_choice: { type: 'auto' },
      });
      expect(first.finishReason).toBe('tool_calls');
      expect(first.response).toBe('Let me call a tool.');
      expect(first.toolCalls).toEqual([
        { id: expect.stringMatching(/^toolu_/), name: 'get_weather', arguments: '{"city":"city-1"}' },
        { id: expect.stringMatching(/^toolu_/), name: 'get_time', arguments: '{"zone":"zone-2"}' },
      ]);
      const [weatherId, clockId] = first.toolCalls!.map((call) => call.id);

      const second = await ai.generateMessages(
        [
          { role: 'user', content: 'Weather and time in Paris?' },
          { role: 'assistant', content: null, toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: weatherId, content: '18C' },
          { role: 'tool', toolCallId: clockId, content: 'error: unknown zone', isError: true },
        ],
        { tools: [weather, clock] },
      );
      const messages = sentBody().messages as unknown[];
      expect(messages.slice(-2)).toEqual([
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: weatherId, name: 'get_weather', input: { city: 'city-1' } },
            { type: 'tool_use', id: clockId, name: 'get_time', input: { zone: 'zone-2' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: weatherId, content: '18C' },
            { type: 'tool_result', tool_use_id: clockId, content: 'error: unknown zone', is_error: true },
          ],
        },
      ]);
      expect(second).toMatchObject({ response: 'Tool results: 18C | error: unknown zone', finishReason: 'stop' });
      expect(second.toolCalls).toBeUndefined();
    });

    it('streams two tool calls whose arguments arrive in several pieces', async () => {
      const events: GenerateStreamEvent[] = [];
      for await (const event of client().streamMessages([{ role: 'user', content: 'Both?' }], { tools: [weather, clock], toolChoice: 'required' })) {
        events.push(event);
      }
      expect(sentBody()).toMatchObject({ stream: true, tool_choice: { type: 'any' } });
      const deltas = events.flatMap((e) => (e.type === 'delta' ? (e.toolCalls ?? []) : []));
      expect(deltas.filter((d) => d.index === 0 && d.arguments).length).toBeGreaterThan(1);
      const assembled = [0, 1].map((index) => {
        const parts = deltas.filter((d) => d.index === index);
        return { id: parts[0].id, name: parts[0].name, arguments: parts.map((d) => d.arguments ?? '').join('') };
      });
      expect(assembled).toEqual([
        { id: expect.stringMatching(/^toolu_/), name: 'get_weather', arguments: '{"city":"city-1"}' },
        { id: expect.stringMatching(/^toolu_/), name: 'get_time', arguments: '{"zone":"zone-2"}' },
      ]);
      expect(events[events.length - 1]).toMatchObject({ type: 'done', finishReason: 'tool_calls' });
    });

    it('sends a forced tool with disable_parallel_tool_use', async () => {
      const result = await client().generateMessages([{ role: 'user', content: 'x' }], {
        tools: [weather, clock],
        toolChoice: { name: 'get_time' },
        parallelToolCalls: false,
      });
      expect(sentBody().tool_choice).toEqual({ type: 'tool', name: 'get_time', disable_parallel_tool_use: true });
      expect(result.toolCalls?.map((c) => c.name)).toEqual(['get_time']);
    });

    it('answers json_schema through a forced tool, as text JSON with finish reason stop, streamed too', async () => {
      const schema = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } } };
      const responseFormat = { type: 'json_schema' as const, name: 'city_facts', schema };
      const result = await client().generateMessages([{ role: 'user', content: 'Paris?' }], { responseFormat });
      expect(sentBody()).toMatchObject({
        tools: [{ name: 'city_facts', input_schema: schema }],
        tool_choice: { type: 'tool', name: 'city_facts' },
      });
      expect(JSON.parse(result.response)).toEqual({ city: 'city-1', population: 1 });
      expect(result).toMatchObject({ finishReason: 'stop' });
      expect(result.toolCalls).toBeUndefined();

      let text = '';
      let finish: string | undefined;
      for await (const event of client().streamMessages([{ role: 'user', content: 'Paris?' }], { responseFormat })) {
        if (event.type === 'delta') {
          expect(event.toolCalls).toBeUndefined();
          text += event.text;
        } else finish = event.finishReason;
      }
      expect(JSON.parse(text)).toEqual({ city: 'city-1', population: 1 });
      expect(finish).toBe('stop');
    });

    it('sends base64 images as base64 sources and http(s) URLs as url sources', async () => {
      const result = await client().generateMessages([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', image: { kind: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ]);
      expect((sentBody().messages as unknown[])[0]).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      });
      expect(result.response).toContain('images seen: 2');
    });

    it('refuses invalid tool call arguments, seed and non-zero penalties without calling upstream; accepts zero penalties', async () => {
      const ai = client();
      await expectSanitized(
        ai.generateMessages([
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, toolCalls: [{ id: 't', name: 'get_weather', arguments: '{"city":' }] },
          { role: 'tool', toolCallId: 't', content: 'r' },
        ], { tools: [weather] }),
        InvalidRequestError,
        secrets,
      );
      await expect(ai.generateMessages(suite.ask.messages, { seed: 7 })).rejects.toThrow('seed');
      await expect(ai.generateMessages(suite.ask.messages, { presencePenalty: 0.5 })).rejects.toThrow('presence_penalty');
      expect(suite.emulator.server.requestsTo('/v1/messages')).toHaveLength(0);
      await ai.generateMessages(suite.ask.messages, { presencePenalty: 0, frequencyPenalty: 0 });
      expect(sentBody()).not.toHaveProperty('presence_penalty');
    });

    it('refuses tools and images for pre-Claude 3 models as capability_not_supported', async () => {
      await expect(client('claude-2.1').generateMessages(suite.ask.messages, { tools: [weather] })).rejects.toBeInstanceOf(
        CapabilityNotSupportedError,
      );
      expect(suite.emulator.server.requestsTo('/v1/messages')).toHaveLength(0);
    });
  });

  describe('embeddings', () => {
    it('reports no embedding capability and refuses embed without an upstream call', async () => {
      const provider = create();
      expect(provider.capabilities).toMatchObject({ generate: true, embeddings: false, batchEmbeddings: false });
      await expectSanitized(provider.embed(), CapabilityNotSupportedError, secrets);
      expect(suite.emulator.server.requests).toHaveLength(0);
    });
  });

  describe('models', () => {
    it('lists models across pages', async () => {
      const models = await create().listModels();
      expect(models).toEqual([
        { id: 'claude-sonnet-4-5', provider: 'anthropic' },
        { id: 'claude-haiku-4-5', provider: 'anthropic' },
        { id: 'claude-opus-4-1', provider: 'anthropic' },
      ]);
      expect(suite.emulator.server.lastRequest?.query.get('limit')).toBe('1000');
    });

    it('follows has_more with after_id', async () => {
      const many = await startAnthropicEmulator({ models: Array.from({ length: 1500 }, (_, i) => `claude-${i}`) });
      try {
        const models = await create({ url: many.url }).listModels();
        expect(models).toHaveLength(1500);
        expect(many.server.requests.map((r) => r.query.get('after_id'))).toEqual([null, 'claude-999']);
      } finally {
        await many.close();
      }
    });

    it('rejects a list without data as an invalid response', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { models: [] } });
      await expectSanitized(create().listModels(), InvalidResponseError, secrets);
    });
  });

  describe('health', () => {
    it('is healthy when the configured model exists', async () => {
      const health = await create().healthCheck();
      expect(health).toMatchObject({
        provider: 'anthropic',
        kind: 'anthropic',
        status: 'healthy',
        reachable: true,
        ready: true,
        model: 'claude-sonnet-4-5',
      });
      expect(suite.emulator.server.lastRequest?.path).toBe('/v1/models/claude-sonnet-4-5');
    });

    it('is unhealthy when the model is unknown', async () => {
      const health = await create({ chatModel: 'claude-nope' }).healthCheck();
      expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
      expect(health.error).not.toContain(ANTHROPIC_BODY_MARKER);
    });

    it('is unhealthy with a wrong key, without leaking it', async () => {
      const health = await create({ apiKey: 'sk-ant-wrong-key' }).healthCheck();
      expect(health).toMatchObject({ status: 'unhealthy', reachable: true, ready: false });
      expect(health.error).not.toContain('sk-ant-wrong-key');
      expect(health.error).not.toContain(ANTHROPIC_BODY_MARKER);
    });

  });

  describe('errors', () => {
    it('maps a wrong key (401 authentication_error) to AuthenticationError', async () => {
      const error = await expectSanitized(
        create({ apiKey: 'sk-ant-wrong-key' }).generate(ask),
        AuthenticationError,
        secrets,
      );
      expect(error.message).not.toContain('sk-ant-wrong-key');
      expect(error.message).toContain('authentication_error');
    });

    it('maps 403 permission_error to AuthenticationError', async () => {
      suite.emulator.server.failNext(403, { body: anthropicError('permission_error', 'not allowed') });
      await expectSanitized(create().generate(ask), AuthenticationError, secrets);
    });

    it('maps 404 not_found_error for the model to ModelNotAvailableError', async () => {
      const error = await expectSanitized(
        create().generate({ ...ask, model: 'claude-missing' }),
        ModelNotAvailableError,
        secrets,
      );
      expect(error.message).toContain("'claude-missing'");
    });

    it('maps 429 rate_limit_error with retry-after to RateLimitError', async () => {
      suite.emulator.server.rateLimitNext('7', { body: anthropicError('rate_limit_error', 'slow down') });
      const error = await expectSanitized(create().generate(ask), RateLimitError, secrets);
      expect(error.retryAfterMs).toBe(7000);
    });

    it.each([
      [500, 'api_error'],
      [529, 'overloaded_error'],
    ])('maps %i %s to ProviderError with the status', async (status, type) => {
      suite.emulator.server.failNext(status, { body: anthropicError(type, 'upstream trouble') });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(status);
      expect(error.message).toContain(type);
    });

    it('maps a 400 invalid_request_error to a non-retryable ProviderError', async () => {
      suite.emulator.server.failNext(400, { body: anthropicError('invalid_request_error', 'prompt is too long') });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.status).toBe(400);
    });

    it('ignores an error type that is not a plain token', async () => {
      suite.emulator.server.failNext(500, { body: { type: 'error', error: { type: `<${ANTHROPIC_BODY_MARKER}>` } } });
      const error = await expectSanitized(create().generate(ask), ProviderError, secrets);
      expect(error.message).toBe('anthropic: upstream returned 500');
    });

    it('maps malformed JSON to InvalidResponseError', async () => {
      suite.emulator.server.malformedNext();
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
    });

    it('maps a 200 without content blocks, or a text block without text, to InvalidResponseError', async () => {
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { type: 'message', content: 'nope' } });
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
      suite.emulator.server.inject({ kind: 'status', status: 200, body: { type: 'message', content: [{ type: 'text' }] } });
      await expectSanitized(create().generate(ask), InvalidResponseError, secrets);
    });

    it('keeps only text blocks of a mixed answer', async () => {
      suite.emulator.server.inject({
        kind: 'status',
        status: 200,
        body: {
          type: 'message',
          model: 'claude-sonnet-4-5',
          content: [
            { type: 'thinking', thinking: 'hmm' },
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
          stop_reason: 'max_tokens',
        },
      });
      expect(await create().generate(ask)).toEqual({
        text: 'ab',
        model: 'claude-sonnet-4-5',
        finishReason: 'length',
      });
    });

    it('refuses to start without an API key', () => {
      expect(() => create({ apiKey: undefined })).toThrow(TollgateError);
    });
  });

  describe('the emulator rejects malformed requests like the real API', () => {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${suite.emulator.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': ANTHROPIC_EMULATOR_KEY,
          'anthropic-version': ANTHROPIC_VERSION,
          ...headers,
        },
        body: JSON.stringify(body),
      });

    it('400 invalid_request_error without max_tokens', async () => {
      const response = await post({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    });

    it('400 invalid_request_error for a system-role message', async () => {
      const response = await post({
        model: 'claude-sonnet-4-5',
        max_tokens: 5,
        messages: [{ role: 'system', content: 'x' }],
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toContain('top-level `system` parameter');
    });

    it('400 for a tool_use not answered by a tool_result in the next message, or an image with a bad media type', async () => {
      const unanswered = await post({
        model: 'claude-sonnet-4-5',
        max_tokens: 5,
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
          { role: 'user', content: 'no result' },
        ],
      });
      expect(unanswered.status).toBe(400);
      const badImage = await post({
        model: 'claude-sonnet-4-5',
        max_tokens: 5,
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'x' } }] }],
      });
      expect(badImage.status).toBe(400);
    });

    it('400 without the anthropic-version header', async () => {
      const response = await fetch(`${suite.emulator.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ANTHROPIC_EMULATOR_KEY },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 5,
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      });
      expect(response.status).toBe(400);
    });

    it('401 authentication_error without x-api-key', async () => {
      const response = await post({}, { 'x-api-key': '' });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: { type: 'authentication_error' } });
    });

    it('sends rate-limit headers on success', async () => {
      const response = await post({
        model: 'claude-sonnet-4-5',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('49');
    });
  });

  it('describes itself without the API key', () => {
    const described = create().describe();
    expect(JSON.stringify(described)).not.toContain(ANTHROPIC_EMULATOR_KEY);
    expect(described).toMatchObject({
      kind: 'anthropic',
      chatModel: 'claude-sonnet-4-5',
      anthropicVersion: '2023-06-01',
    });
  });

  describeSharedProviderBehaviour(suite, AnthropicProvider, { embeds: false });
});
