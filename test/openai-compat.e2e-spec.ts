/**
 * The OpenAI-compatible surface of the real application, listening on loopback, driven by clients no one
 * here wrote: the official `openai` package and the Vercel AI SDK (`ai` + `@ai-sdk/openai-compatible`),
 * with provider emulators behind the gateway.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { embedMany, generateText, streamText } from 'ai';
import diagnosticsChannel from 'node:diagnostics_channel';
import OpenAI from 'openai';
import { AiClient } from '../src/ai/client/ai-client';
import { InvalidRequestError } from '../src/ai/errors';
import type { ChatMessage } from '../src/ai/providers/ai-provider.interface';
import { ANTHROPIC_BODY_MARKER, ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import { type OpenAiEmulator, UPSTREAM_MARKER, vectorFor } from './emulators/openai-emulator';
import { OpenAiPair } from './support/openai-pair';
import { TestApps } from './support/test-apps';

const KEY = 'sk-openai-compat-KEY-8841';
const TOKEN = 'api-token-for-openai-compat';

let upstreams: OpenAiPair;
let openaiUpstream: OpenAiEmulator;
let deepseekUpstream: OpenAiEmulator;
let anthropicUpstream: AnthropicEmulator;
let apps: TestApps;
/** The gateway most tests use (its application and OpenAI base URL): no retries, no fallback, so each upstream fault is seen as it is. */
let gateway: NestFastifyApplication;
let baseURL: string;

/** The real application from a YAML `ai:` line, listening on a free loopback port, and its OpenAI base URL. */
async function startGateway(ai: string, extraYaml: string[] = []): Promise<{ app: NestFastifyApplication; url: string }> {
  const { app, origin } = await apps.listen(
    [
      'version: 1',
      `ai: ${ai}`,
      'providers:',
      '  openai: { timeout: 2 }',
      `  anthropic: { url: "${anthropicUpstream.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-haiku-4-5 }`,
      // Filled by the DEEPSEEK_* variables of the spec's environment; a providers: section must name it.
      '  deepseek: {}',
      ...extraYaml,
      '',
    ].join('\n'),
  );
  return { app, url: `${origin}/openai/v1` };
}

beforeAll(async () => {
  [upstreams, anthropicUpstream] = await Promise.all([
    OpenAiPair.start(KEY, { chatModels: ['gpt-test', 'gpt-other'], embeddingModels: ['embed-test'] }),
    startAnthropicEmulator({ reply: 'Hello from Claude here' }),
  ]);
  ({ openai: openaiUpstream, deepseek: deepseekUpstream } = upstreams);
  apps = new TestApps('tollgate-openai-compat-', { ...upstreams.env(), API_TOKEN: TOKEN });
  ({ app: gateway, url: baseURL } = await startGateway('{ retry_attempts: 0, enable_fallback: false, default_provider: openai }'));
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([upstreams?.close(), anthropicUpstream?.close()]);
});

beforeEach(() => {
  upstreams.reset();
  anthropicUpstream.server.reset();
});

/** The official client, without its own retries so each test sees exactly one gateway answer. */
const officialClient = (apiKey = TOKEN, url = baseURL) => new OpenAI({ apiKey, baseURL: url, maxRetries: 0 });

/** Plain HTTP for what a client library would hide (headers, raw bodies). */
function post(path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) {
  return fetch(`${baseURL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Asserts OpenAI's error shape and that nothing from upstream or the configuration leaks into it. */
async function expectOpenAiError(response: Response, status: number, expected: { type: string; code: string | null; param?: string | null; says?: string }) {
  expect(response.status).toBe(status);
  const text = await response.text();
  const body = JSON.parse(text);
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toEqual({ message: expect.any(String), type: expected.type, param: expected.param ?? null, code: expected.code });
  if (expected.says) expect(body.error.message).toContain(expected.says);
  for (const secret of [UPSTREAM_MARKER, ANTHROPIC_BODY_MARKER, KEY, ANTHROPIC_EMULATOR_KEY, '127.0.0.1']) {
    expect(text).not.toContain(secret);
  }
  expect(text).not.toMatch(/\bat \S+:\d+:\d+/);
  return body.error;
}

describe('official openai client', () => {
  it('chat.completions.create: OpenAI shape, roles passed through, sampling options sent upstream', async () => {
    const completion = await officialClient().chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'noted' },
        { role: 'user', content: 'Hello gateway' },
      ],
      max_tokens: 50,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
    });
    expect(completion).toEqual({
      id: expect.stringMatching(/^chatcmpl-[0-9a-f]{32}$/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'openai/gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: Hello gateway', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(60);
    const [sent] = openaiUpstream.server.requests;
    expect(sent.body).toMatchObject({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'noted' },
        { role: 'user', content: 'Hello gateway' },
      ],
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
    });
    // The gateway's own key goes upstream, never the caller's API token.
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('model "anthropic/<model>" selects that provider and model; developer messages and text parts are understood', async () => {
    const completion = await officialClient().chat.completions.create({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'developer', content: 'You are terse.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi ' }, { type: 'text', text: 'there' }] },
      ],
      max_completion_tokens: 40,
    });
    expect(completion.model).toBe('anthropic/claude-sonnet-4-5');
    expect(completion.choices[0].message.content).toBe('Hello from Claude here');
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(openaiUpstream.server.requests).toHaveLength(0);
    const [sent] = anthropicUpstream.server.requests;
    // Text parts stay parts: Anthropic takes text blocks as they are.
    expect(sent.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      system: 'You are terse.',
      max_tokens: 40,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi ' }, { type: 'text', text: 'there' }] }],
    });
  });

  it.each(['meta-llama/Llama-3', 'nosuchprovider/x', 'gpt-unconfigured'])('%s, which no provider serves, is 404 model_not_found with no upstream call', async (model) => {
    const error = await officialClient()
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe('model_not_found');
    expect(error.param).toBe('model');
    expect(error.message).toContain(`model '${model}' is not served by any configured provider`);
    const streamed = await officialClient()
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], stream: true })
      .catch((caught) => caught);
    expect(streamed).toBeInstanceOf(OpenAI.NotFoundError);
    expect(openaiUpstream.server.requests).toHaveLength(0);
    expect(anthropicUpstream.server.requests).toHaveLength(0);
  });

  it('a slash after a registered provider stays part of the model name', async () => {
    const error = await officialClient()
      .chat.completions.create({ model: 'openai/meta-llama/Llama-3', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught) => caught);
    // The emulator does not serve it: its 404 is the provider's answer, after the request went out as named.
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(openaiUpstream.server.requests[0].body).toMatchObject({ model: 'meta-llama/Llama-3' });
  });

  it('embeddings.create: the client\'s default base64 encoding decodes to the provider\'s vectors; float on request', async () => {
    const client = officialClient();
    const encoded = await client.embeddings.create({ model: 'embed-test', input: ['alpha', 'beta'] });
    expect(encoded.object).toBe('list');
    expect(encoded.model).toBe('openai/embed-test');
    expect(encoded.data.map((item) => item.index)).toEqual([0, 1]);
    expect(encoded.data[0].embedding).toEqual(vectorFor('alpha', 4));
    expect(encoded.data[1].embedding).toEqual(vectorFor('beta', 4));
    // The upstream's count (the emulator reports one token per input), as the ledger records it.
    expect(encoded.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });

    const floats = await client.embeddings.create({ model: 'openai/embed-test', input: 'gamma', encoding_format: 'float' });
    expect(floats.data).toEqual([{ object: 'embedding', index: 0, embedding: vectorFor('gamma', 4) }]);
    // One upstream call for the whole batch.
    expect(openaiUpstream.server.requests.filter((r) => r.path === '/v1/embeddings')).toHaveLength(2);
  });

  it('models.list: every provider\'s models as provider/model ids', async () => {
    const ids: string[] = [];
    for await (const model of officialClient().models.list()) {
      expect(model).toEqual({ id: expect.any(String), object: 'model', created: 0, owned_by: expect.any(String) });
      ids.push(model.id);
    }
    expect(ids).toEqual(
      expect.arrayContaining(['openai/gpt-test', 'openai/embed-test', 'anthropic/claude-sonnet-4-5', 'anthropic/claude-haiku-4-5', 'deepseek/deepseek-chat']),
    );
  });

  it('a wrong API token is an AuthenticationError (401 invalid_api_key, WWW-Authenticate: Bearer); nothing goes upstream', async () => {
    const error = await officialClient('not-the-token')
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.status).toBe(401);
    expect(error.code).toBe('invalid_api_key');
    expect(error.headers.get('www-authenticate')).toBe('Bearer');
    expect(openaiUpstream.server.requests).toHaveLength(0);
  });

  it('an invalid parameter is a BadRequestError naming it, before any upstream call', async () => {
    const error = await officialClient()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], temperature: 3 })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('temperature');
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain("'temperature'");
    expect(openaiUpstream.server.requests).toHaveLength(0);
  });

  it('an upstream rate limit is a RateLimitError with Retry-After; upstream 5xx is an InternalServerError', async () => {
    openaiUpstream.rateLimitNext('7');
    const limited = await officialClient()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }, { maxRetries: 0 })
      .catch((caught) => caught);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.code).toBe('rate_limit_exceeded');
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(limited.message).not.toContain(UPSTREAM_MARKER);

    // An overloaded upstream (503) is the 503 OpenAI answers when overloaded; another 5xx is /v1's 502.
    openaiUpstream.serverErrorNext(503);
    const overloaded = await officialClient()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught) => caught);
    expect(overloaded).toBeInstanceOf(OpenAI.InternalServerError);
    expect(overloaded.status).toBe(503);
    openaiUpstream.serverErrorNext(500);
    const failed = await officialClient()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught) => caught);
    expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
    expect(failed.status).toBe(502);
    expect(failed.type).toBe('server_error');
    expect(failed.code).toBe('provider_error');
    expect(failed.message).not.toContain(UPSTREAM_MARKER);
  });
});

describe('streaming', () => {
  it('official client, stream: true: the role, content deltas, the finish reason, a usage chunk on request', async () => {
    const stream = await officialClient().chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hello stream of words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const ids = new Set(chunks.map((chunk) => chunk.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === 'openai/gpt-test')).toBe(true);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('echo: Hello stream of words');
    // More than one content delta: the answer is passed on as it arrives, not collected first.
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(2);
    const finishing = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finishing.map((chunk) => chunk.choices[0].finish_reason)).toEqual(['stop']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } });
    expect(openaiUpstream.server.requests[0].body).toMatchObject({ model: 'gpt-test', stream: true });
  });

  it('official client stream helper: finalChatCompletion() assembles the streamed answer from another provider', async () => {
    const runner = officialClient().chat.completions.stream({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    const deltas: string[] = [];
    runner.on('content', (delta) => deltas.push(delta));
    const completion = await runner.finalChatCompletion();
    expect(completion.choices[0].message.content).toBe('Hello from Claude here');
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(deltas.length).toBeGreaterThan(1);
    expect(anthropicUpstream.server.requests[0].body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true });
  });

  it('a failure before the first chunk is an ordinary error response with its status', async () => {
    openaiUpstream.rateLimitNext('3');
    const error = await officialClient()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stream: true })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.headers.get('retry-after')).toBe('3');
    expect(error.message).not.toContain(UPSTREAM_MARKER);
  });

  it('a failure after the first chunk is one error event, raised by the official client; no [DONE]', async () => {
    openaiUpstream.midStreamErrorNext();
    const stream = await officialClient().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'cut short' }], stream: true });
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.type).toBe('server_error');
    expect(error.message).not.toContain(UPSTREAM_MARKER);
    expect(text).toBe('echo: ');

    openaiUpstream.midStreamErrorNext();
    const raw = await (await post('/chat/completions', { model: 'gpt-test', messages: [{ role: 'user', content: 'cut short' }], stream: true })).text();
    const events = raw.split('\n\n').filter(Boolean);
    expect(JSON.parse(events.at(-1)!.slice('data: '.length))).toEqual({
      error: { message: expect.any(String), type: 'server_error', param: null, code: 'provider_error' },
    });
    expect(raw).not.toContain('[DONE]');
    expect(raw).not.toContain(UPSTREAM_MARKER);
  });

  it('a caller that goes away mid-stream ends the upstream request', async () => {
    openaiUpstream.server.inject({ kind: 'stream', chunkDelayMs: 200 });
    const response = await post('/chat/completions', { model: 'gpt-test', messages: [{ role: 'user', content: 'a slow answer of many words' }], stream: true }, {
      authorization: `Bearer ${TOKEN}`,
    });
    const reader = response.body!.getReader();
    await reader.read();
    const aborted = openaiUpstream.server.waitForAbort();
    await reader.cancel();
    await aborted;
    expect(openaiUpstream.server.requests[0].aborted).toBe(true);
  });

  it('wire format: text/event-stream, x-request-id, data lines ending with data: [DONE]', async () => {
    const response = await post('/chat/completions', { model: 'gpt-test', messages: [{ role: 'user', content: 'wire' }], stream: true }, {
      authorization: `Bearer ${TOKEN}`,
      'x-request-id': 'trace-stream-1',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toBe('trace-stream-1');
    const text = await response.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = text.split('\n\n').filter(Boolean);
    expect(events.every((event) => event.startsWith('data: '))).toBe(true);
    // Without stream_options.include_usage there is no usage chunk.
    expect(text).not.toContain('"usage"');
  });

  it('Vercel AI SDK streamText', async () => {
    const tollgate = createOpenAICompatible({ name: 'tollgate', baseURL, apiKey: TOKEN, includeUsage: true });
    const result = streamText({ model: tollgate.chatModel('gpt-test'), prompt: 'Streaming through the AI SDK', maxRetries: 0 });
    const parts: string[] = [];
    for await (const part of result.textStream) parts.push(part);
    expect(parts.join('')).toBe('echo: Streaming through the AI SDK');
    expect(parts.length).toBeGreaterThan(2);
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject({ inputTokens: 7, outputTokens: 3, totalTokens: 10 });
    expect(openaiUpstream.server.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });
});

describe('the same AiClient underneath: retries, fallback, service.request events', () => {
  let fallbackURL: string;
  beforeAll(async () => {
    ({ url: fallbackURL } = await startGateway(
      // health_cache_ttl 0: each test counts the upstream calls of its own listings.
      '{ retry_attempts: 1, retry_delay: 0, health_cache_ttl: 0, default_provider: openai, fallback_providers: [anthropic], model_aliases: { chat: [openai/gpt-test, anthropic/claude-sonnet-4-5] } }',
    ));
  });

  /** Collects the `service.request` events published while `run` is under way. */
  async function withEvents<T>(run: () => Promise<T>): Promise<{ result: T; events: Array<{ payload: Record<string, unknown> }> }> {
    const events: Array<{ payload: Record<string, unknown> }> = [];
    const listener = (message: unknown) => events.push(message as { payload: Record<string, unknown> });
    diagnosticsChannel.subscribe('tollgate:service.request', listener);
    try {
      return { result: await run(), events };
    } finally {
      diagnosticsChannel.unsubscribe('tollgate:service.request', listener);
    }
  }

  it('a rate limit is retried on the same provider; each attempt is an event', async () => {
    openaiUpstream.rateLimitNext('0');
    const { result, events } = await withEvents(() =>
      officialClient(TOKEN, fallbackURL).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'again' }] }),
    );
    expect(result.model).toBe('openai/gpt-test');
    expect(result.choices[0].message.content).toBe('echo: again');
    expect(openaiUpstream.server.requests).toHaveLength(2);
    expect(events.map((event) => event.payload)).toEqual([
      expect.objectContaining({ provider: 'openai', operation: 'generate', status: 'error', attempt: 1, errorType: 'rate_limited' }),
      expect.objectContaining({ provider: 'openai', operation: 'generate', status: 'success', attempt: 2 }),
    ]);
  });

  it.each(['chat', 'openai/gpt-test'])('model %s: a provider failure falls back to the configured equivalent, which the response names', async (model) => {
    openaiUpstream.serverErrorNext(503);
    const completion = await officialClient(TOKEN, fallbackURL).chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] });
    expect(completion.model).toBe('anthropic/claude-sonnet-4-5');
    expect(completion.choices[0].message.content).toBe('Hello from Claude here');
    expect(openaiUpstream.server.requests[0].body).toMatchObject({ model: 'gpt-test' });
    expect(anthropicUpstream.server.requests[0].body).toMatchObject({ model: 'claude-sonnet-4-5' });
  });

  it('a model without a configured equivalent never falls back to another model', async () => {
    openaiUpstream.serverErrorNext(503);
    const error = await officialClient(TOKEN, fallbackURL)
      .chat.completions.create({ model: 'openai/gpt-other', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(anthropicUpstream.server.requests).toHaveLength(0);
  });

  it('GET /models lists the aliases; GET /models/{id} answers aliases and configured models from the configuration', async () => {
    const models = await officialClient(TOKEN, fallbackURL).models.list();
    expect(models.data).toContainEqual({ id: 'chat', object: 'model', created: 0, owned_by: 'tollgate' });
    openaiUpstream.server.reset();
    anthropicUpstream.server.reset();
    expect(await officialClient(TOKEN, fallbackURL).models.retrieve('chat')).toEqual({ id: 'chat', object: 'model', created: 0, owned_by: 'tollgate' });
    expect(await officialClient(TOKEN, fallbackURL).models.retrieve('claude-haiku-4-5')).toEqual({
      id: 'claude-haiku-4-5',
      object: 'model',
      created: 0,
      owned_by: 'anthropic',
    });
    expect(anthropicUpstream.server.requests).toHaveLength(0);
    expect(openaiUpstream.server.requests).toHaveLength(0);
  });

  it('GET /models/{id}: another provider/model is looked up in that provider\'s listing; unknown ones are 404 model_not_found', async () => {
    const found = await officialClient(TOKEN, fallbackURL).models.retrieve('openai/gpt-other');
    expect(found).toMatchObject({ id: 'openai/gpt-other', object: 'model' });
    expect(openaiUpstream.server.requests.map((request) => request.path)).toEqual([expect.stringMatching(/\/models$/)]);
    for (const id of ['openai/gpt-missing', 'nosuchprovider/x', 'gpt-unconfigured']) {
      const error = await officialClient(TOKEN, fallbackURL).models.retrieve(id).catch((caught) => caught);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.code).toBe('model_not_found');
    }
  });
});

describe('AiClient.generateMessages in-process', () => {
  it('sends the messages as given, a systemPrompt first; refuses malformed messages before any call', async () => {
    const client = gateway.get(AiClient);
    const messages: ChatMessage[] = [{ role: 'user', content: 'in-process' }];
    const result = await client.generateMessages(messages, { systemPrompt: 'Rules first.', maxTokens: 9 });
    expect(result).toEqual({ response: 'echo: in-process', provider: 'openai', model: 'gpt-test', finishReason: 'stop', usage: expect.any(Object) });
    expect(openaiUpstream.server.requests[0].body).toMatchObject({
      messages: [
        { role: 'system', content: 'Rules first.' },
        { role: 'user', content: 'in-process' },
      ],
    });
    expect(messages).toHaveLength(1);
    await expect(client.generateMessages([], {})).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(client.generateMessages([{ role: 'tool', content: 'x' } as unknown as ChatMessage], {})).rejects.toThrow('messages[0].toolCallId');
    await expect(client.generateMessages([{ role: 'developer', content: 'x' } as unknown as ChatMessage], {})).rejects.toThrow('messages[0].role');
    expect(openaiUpstream.server.requests).toHaveLength(1);
  });
});

describe('Vercel AI SDK (openai-compatible provider)', () => {
  const tollgate = () => createOpenAICompatible({ name: 'tollgate', baseURL, apiKey: TOKEN });

  it('generateText', async () => {
    const result = await generateText({ model: tollgate().chatModel('gpt-test'), system: 'Be brief.', prompt: 'Hello from the AI SDK', maxRetries: 0 });
    expect(result.text).toBe('echo: Hello from the AI SDK');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: 7, outputTokens: 3, totalTokens: 10 });
    expect(result.response.modelId).toBe('openai/gpt-test');
    expect(openaiUpstream.server.requests[0].body).toMatchObject({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello from the AI SDK' },
      ],
    });
  });

  it('embedMany: one batch, vectors in input order', async () => {
    const { embeddings } = await embedMany({ model: tollgate().textEmbeddingModel('embed-test'), values: ['one', 'two', 'three'], maxRetries: 0 });
    expect(embeddings).toEqual([vectorFor('one', 4), vectorFor('two', 4), vectorFor('three', 4)]);
    expect(openaiUpstream.server.requests).toHaveLength(1);
  });

  it('generateText against an unknown model rejects with the gateway\'s 404', async () => {
    const error = await generateText({ model: tollgate().chatModel('no-such-model'), prompt: 'x', maxRetries: 0 }).catch((caught) => caught);
    expect(error.statusCode).toBe(404);
    expect(error.message).not.toContain(UPSTREAM_MARKER);
  });
});

describe('with the AuthModule configured', () => {
  const JWT_SECRET = 'openai-compat-jwt-secret-of-at-least-32-bytes';

  it('/openai/v1 answers to the API token like /v1, not to the JWT guard', async () => {
    const { url } = await startGateway('{ retry_attempts: 0, enable_fallback: false }', [`auth: { jwt_secret: "${JWT_SECRET}" }`]);
    const listed = await officialClient(TOKEN, url).models.list();
    expect(listed.data.length).toBeGreaterThan(0);
    const denied = await officialClient('wrong', url).models.list().catch((caught) => caught);
    expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(denied.code).toBe('invalid_api_key');
  });

  it('with api.auth: jwt the AuthModule guards it, with its own 401 body', async () => {
    const { url } = await startGateway('{ retry_attempts: 0, enable_fallback: false }', [`auth: { jwt_secret: "${JWT_SECRET}" }`, 'api: { auth: jwt }']);
    const response = await fetch(`${url}/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'Authentication required', status: 401 });
  });
});

describe('HTTP details', () => {
  it('a body that is not JSON: 400 invalid_request_error, code invalid_json', async () => {
    await expectOpenAiError(await post('/chat/completions', '{"model":'), 400, { type: 'invalid_request_error', code: 'invalid_json' });
  });

  it.each([
    [{ messages: [{ role: 'user', content: 'x' }] }, 'model', 'missing_required_parameter', "Missing required parameter: 'model'"],
    [{ model: 'gpt-test', messages: [] }, 'messages', 'invalid_value', "'messages'"],
    [{ model: 'gpt-test', messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id', 'missing_required_parameter', "'messages[0].tool_call_id'"],
    [{ model: 'gpt-test', messages: [{ role: 'user', content: 5 }] }, 'messages[0].content', 'invalid_type', 'string or array'],
    [{ model: 'gpt-test', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 'messages[0].content', 'invalid_image_url', 'base64 data: URL'],
    [{ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], logprobs: true }, 'logprobs', 'unsupported_value', "'logprobs' true is not supported"],
    [{ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], top_logprobs: 2 }, 'top_logprobs', 'unknown_parameter', 'Unrecognized request argument supplied: top_logprobs'],
    [{ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], n: 2 }, 'n', 'invalid_value', 'only 1'],
    [{ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, 'max_tokens', 'invalid_value', '>= 1'],
    [{ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'invalid_value', 'at most 4'],
    [{ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], max_tokens: 5, max_completion_tokens: 5 }, 'max_completion_tokens', null, 'not both'],
    [{ model: 'openai/', messages: [{ role: 'user', content: 'x' }] }, 'model', 'invalid_request', "provider 'openai'"],
  ])('chat body %j: 400 naming %s', async (body, param, code, says) => {
    await expectOpenAiError(await post('/chat/completions', body), 400, { type: 'invalid_request_error', code, param, says });
    expect(openaiUpstream.server.requests).toHaveLength(0);
  });

  it('embeddings: bad input named; a generation-only provider is 400 capability_not_supported on param model', async () => {
    await expectOpenAiError(await post('/embeddings', { model: 'embed-test', input: [] }), 400, { type: 'invalid_request_error', code: 'invalid_value', param: 'input' });
    await expectOpenAiError(await post('/embeddings', { model: 'embed-test', input: [1] }), 400, { type: 'invalid_request_error', code: 'invalid_type', param: 'input[0]' });
    const many = Array.from({ length: 33 }, (_, i) => `t${i}`);
    await expectOpenAiError(await post('/embeddings', { model: 'embed-test', input: many }), 400, { type: 'invalid_request_error', code: 'invalid_value', param: 'input', says: 'at most 32' });
    await expectOpenAiError(await post('/embeddings', { model: 'deepseek/deepseek-chat', input: 'x' }), 400, {
      type: 'invalid_request_error',
      code: 'capability_not_supported',
      param: 'model',
    });
    expect(deepseekUpstream.server.requests).toHaveLength(0);
  });

  it('an unreachable provider is 503 server_error connection_error, naming no host', async () => {
    openaiUpstream.server.resetNext();
    await expectOpenAiError(await post('/chat/completions', { model: 'openai/gpt-test', messages: [{ role: 'user', content: 'x' }] }), 503, {
      type: 'server_error',
      code: 'connection_error',
    });
  });

  it('routing errors under /openai/v1 answer in OpenAI\'s shape: unknown route 404, wrong method 405 with Allow', async () => {
    await expectOpenAiError(await post('/completions', { model: 'gpt-test', prompt: 'x' }), 404, { type: 'invalid_request_error', code: 'not_found' });
    const wrongMethod = await fetch(`${baseURL}/chat/completions`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    await expectOpenAiError(wrongMethod, 405, { type: 'invalid_request_error', code: 'method_not_allowed' });
  });

  it('a body over server.chat_body_limit is 413 payload_too_large; a base_path mounts the surface under it', async () => {
    const { url } = await startGateway('{ retry_attempts: 0, enable_fallback: false }', ['server: { body_limit: 1024, chat_body_limit: 2048, base_path: /gw }']);
    expect(url).toMatch(/\/openai\/v1$/);
    const mounted = url.replace(/\/openai\/v1$/, '/gw/openai/v1');
    const big = await fetch(`${mounted}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(4096) }] }),
    });
    await expectOpenAiError(big, 413, { type: 'invalid_request_error', code: 'payload_too_large' });
    const completion = await officialClient(TOKEN, mounted).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'mounted' }] });
    expect(completion.choices[0].message.content).toBe('echo: mounted');
  });

  it('responses carry x-request-id; the body is exactly OpenAI\'s (no request_id field)', async () => {
    const response = await post('/chat/completions', { model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }, {
      authorization: `Bearer ${TOKEN}`,
      'x-request-id': 'trace-openai-1',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('trace-openai-1');
    expect(Object.keys((await response.json()) as object).sort()).toEqual(['choices', 'created', 'id', 'model', 'object', 'usage']);
  });
});
