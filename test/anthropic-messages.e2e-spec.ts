/**
 * The Anthropic Messages surface (`/anthropic/v1`) driven by the official `@anthropic-ai/sdk` and
 * `@ai-sdk/anthropic`, with Tollgate routing the model to the Anthropic, OpenAI, Gemini and Ollama emulators:
 * the same client code works on every provider kind, and each upstream receives its own native request. Governance through the SDK's own
 * `x-api-key`: the ledger records the route, a disallowed model and a spent budget are refused in Anthropic's
 * shape, the budget refusal at once.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { Client } from 'pg';
import { z } from 'zod';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, emulatedTokenCount, startAnthropicEmulator } from './emulators/anthropic-emulator';
import type { LoggedRequest } from './emulators/emulator-server';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { TestApps } from './support/test-apps';

const API_TOKEN = 'api-token-for-anthropic-messages';
const ADMIN_TOKEN = 'admin-token-for-anthropic-messages';
const OPENAI_KEY = 'sk-emulator-anthropic-messages';
const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const LEDGER_TABLE = `anthropic_messages_ledger_${process.pid}`;
/** A 1x1 PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

type Json = Record<string, any>;

let anthropic: AnthropicEmulator;
let openai: OpenAiEmulator;
let gemini: GeminiEmulator;
let ollama: OllamaEmulator;
let apps: TestApps;
let origin: string;
let sql: Client;

/** One provider kind behind the surface: the model to name and what its upstream received, natively. */
interface Target {
  name: string;
  model: string;
  /** A model of the provider that takes images. */
  visionModel: string;
  chatRequests(): LoggedRequest[];
  /** Makes the next tool turn call `get_weather` with `{city: 'Paris'}`. */
  scriptWeatherCall(): void;
  /** What refuses a forced single tool call (`tool_choice: any` with `disable_parallel_tool_use`), when the target cannot make one. */
  forcedSingleCallRefusal?: RegExp;
  /** The answer after the tool result `sunny`. */
  afterToolResult: string;
  /** The upstream request carried the system instructions (both), the base64 image and the tool result. */
  expectSystem(body: Json): void;
  expectImage(body: Json): void;
  expectToolResult(body: Json, id: string): void;
  /** Where the upstream request carries top-k sampling; none for a target without it. */
  topKOf?(body: Json): unknown;
}

const anthropicTarget: Target = {
  name: 'the Anthropic emulator',
  model: 'anthropic/claude-sonnet-4-5',
  visionModel: 'anthropic/claude-sonnet-4-5',
  chatRequests: () => anthropic.server.requestsTo('/v1/messages'),
  scriptWeatherCall: () => {
    anthropic.options.toolInputs = { get_weather: { city: 'Paris' } };
  },
  afterToolResult: 'Tool results: sunny',
  topKOf: (body) => body.top_k,
  // The caller's own blocks (cache_control kept), the system message moved after them.
  expectSystem: (body) =>
    expect(body.system).toEqual([
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Answer in English.' },
    ]),
  expectImage: (body) =>
    expect(body.messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      { type: 'text', text: 'What is this?' },
    ]),
  expectToolResult: (body, id) =>
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'sunny' }] }),
};

const openAiTarget: Target = {
  name: 'the OpenAI emulator',
  model: 'openai/gpt-test',
  visionModel: 'openai/gpt-test',
  chatRequests: () => openai.server.requestsTo('/v1/chat/completions'),
  // The OpenAI emulator calls every offered tool with arguments made from its schema.
  scriptWeatherCall: () => undefined,
  afterToolResult: 'tool said: sunny',
  expectSystem: (body) =>
    expect(body.messages.filter((m: Json) => m.role === 'system')).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Answer in English.' },
    ]),
  expectImage: (body) =>
    expect(body.messages[0].content).toEqual([
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
      { type: 'text', text: 'What is this?' },
    ]),
  expectToolResult: (body, id) => expect(body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: id, content: 'sunny' }),
};

const geminiTarget: Target = {
  name: 'the Gemini emulator',
  model: 'gemini/gemini-2.5-flash',
  visionModel: 'gemini/gemini-2.5-flash',
  chatRequests: () => gemini.server.requests.filter((r) => /:(stream)?generateContent$/i.test(r.path)),
  scriptWeatherCall: () => {
    gemini.options.functionCalls = [{ name: 'get_weather', args: { city: 'Paris' } }];
  },
  afterToolResult: 'Hello from the Gemini emulator',
  topKOf: (body) => body.generationConfig?.topK,
  forcedSingleCallRefusal: /^tool_choice\.disable_parallel_tool_use: /,
  expectSystem: (body) => expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.\n\nAnswer in English.' }] }),
  expectImage: (body) => expect(body.contents[0].parts).toEqual([{ inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }, { text: 'What is this?' }]),
  expectToolResult: (body) =>
    expect(body.contents.at(-1)).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'sunny' } } }] }),
};

const ollamaTarget: Target = {
  name: 'the Ollama emulator',
  model: 'ollama/llama3.2',
  visionModel: 'ollama/llava',
  chatRequests: () => ollama.server.requestsTo('/api/chat'),
  scriptWeatherCall: () => {
    ollama.options.toolCalls = [{ name: 'get_weather', arguments: { city: 'Paris' } }];
  },
  afterToolResult: 'Tool results: sunny',
  topKOf: (body) => body.options?.top_k,
  forcedSingleCallRefusal: /^tool_choice: /,
  expectSystem: (body) =>
    expect(body.messages.filter((m: Json) => m.role === 'system')).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Answer in English.' },
    ]),
  expectImage: (body) => expect(body.messages[0]).toEqual({ role: 'user', content: 'What is this?', images: [PNG_BASE64] }),
  expectToolResult: (body) => expect(body.messages.at(-1)).toEqual({ role: 'tool', content: 'sunny', tool_name: 'get_weather' }),
};

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  // What Claude Code puts on its tools: accepted, not refused.
  cache_control: { type: 'ephemeral' },
};

beforeAll(async () => {
  [anthropic, openai, gemini, ollama] = await Promise.all([
    startAnthropicEmulator(),
    OpenAiEmulator.start({ apiKey: OPENAI_KEY }),
    startGeminiEmulator(),
    startOllamaEmulator({ models: ['llama3.2:latest', 'llava:latest'] }),
  ]);
  sql = new Client({ connectionString: PG_URL });
  await sql.connect();
  apps = new TestApps('tollgate-anthropic-messages-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      `api: { token: "${API_TOKEN}" }`,
      'server: { body_limit: 65536, chat_body_limit: 1048576 }',
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: anthropic }',
      'providers:',
      `  anthropic: { url: "${anthropic.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-sonnet-4-5, timeout: 5 }`,
      `  openai: { url: "${openai.url}", api_key: "${OPENAI_KEY}", chat_model: gpt-test, timeout: 5 }`,
      `  gemini: { url: "${gemini.url}", api_key: "${GEMINI_EMULATOR_KEY}", chat_model: gemini-2.5-flash, timeout: 5 }`,
      `  ollama: { url: "${ollama.url}", chat_model: llama3.2, timeout: 5 }`,
      'governance:',
      `  admin_token: "${ADMIN_TOKEN}"`,
      `  ledger: { store: postgres, url: "${PG_URL}", table: ${LEDGER_TABLE} }`,
      '',
    ].join('\n'),
  ));
});

afterAll(async () => {
  await apps?.close();
  await sql?.query(`DROP TABLE IF EXISTS ${LEDGER_TABLE}`).catch(() => undefined);
  await sql?.end();
  await Promise.all([anthropic?.close(), openai?.close(), gemini?.close(), ollama?.close()]);
});

beforeEach(() => {
  for (const emulator of [anthropic, openai, gemini, ollama]) emulator.server.reset();
  anthropic.options.toolInputs = undefined;
  gemini.options.functionCalls = undefined;
  ollama.options.toolCalls = undefined;
});

const client = (apiKey = API_TOKEN) => new Anthropic({ apiKey, baseURL: `${origin}/anthropic`, maxRetries: 0 });
const lastBody = (target: Target) => target.chatRequests().at(-1)!.body as Json;

describe.each([anthropicTarget, openAiTarget, geminiTarget, ollamaTarget])('/anthropic/v1/messages routed to $name', (target) => {
  it('messages.create answers a Message; system blocks and a system message mid-list stay system instructions', async () => {
    const message = await client().messages.create({
      model: target.model,
      max_tokens: 64,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'Hello' },
        // Claude Code sends a system message after the prompt; the SDK's types do not know the role.
        { role: 'system', content: 'Answer in English.' } as unknown as Anthropic.MessageParam,
      ],
      metadata: { user_id: 'user-1' },
      // Older clients send temperature; the SDK's newest types no longer list it.
      temperature: 0.5,
    } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: target.model, stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(message._request_id).toEqual(expect.any(String));
    expect(message.content).toEqual([{ type: 'text', text: expect.any(String) }]);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    target.expectSystem(lastBody(target));
  });

  it('messages.stream runs a tool loop: a tool_use block streamed as input_json_delta, then the answer to the tool_result', async () => {
    target.scriptWeatherCall();
    const params: Anthropic.MessageCreateParams = {
      model: target.model,
      max_tokens: 256,
      tools: [weatherTool],
      tool_choice: { type: 'auto' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    };
    const events: string[] = [];
    const stream = client().messages.stream(params);
    stream.on('streamEvent', (event) => events.push(event.type));
    const first = await stream.finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use')!;
    expect(call).toMatchObject({ name: 'get_weather', input: { city: expect.any(String) } });
    expect(events[0]).toBe('message_start');
    expect(events.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(events).toContain('content_block_start');
    expect(events).toContain('content_block_stop');

    const second = await client()
      .messages.stream({
        ...params,
        messages: [...params.messages, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny' }] }],
      })
      .finalMessage();
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: target.afterToolResult }]);
    target.expectToolResult(lastBody(target), call.id);
  });

  it('takes a base64 image', async () => {
    await client().messages.create({
      model: target.visionModel,
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
    });
    target.expectImage(lastBody(target));
  });

  it("takes a tool result that holds an image (Claude Code's Read on a screenshot): the image reaches the model", async () => {
    const message = await client().messages.create({
      model: target.visionModel,
      max_tokens: 64,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Look at the screenshot' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_read_1', name: 'get_weather', input: { city: 'Paris' } }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_read_1',
              content: [
                { type: 'text', text: 'sunny' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
              ],
            },
          ],
        },
      ],
    });
    expect(message.type).toBe('message');
    expect(JSON.stringify(lastBody(target))).toContain(PNG_BASE64);
  });

  it('the beta client (?beta=true, anthropic-beta) works as the plain one', async () => {
    const message = await client().beta.messages.create({
      model: target.model,
      max_tokens: 32,
      betas: ['interleaved-thinking-2025-05-14'],
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(message).toMatchObject({ type: 'message', stop_reason: 'end_turn' });
  });

  it('@ai-sdk/anthropic: generateText runs a tool loop to the answer, streamText streams the text', async () => {
    target.scriptWeatherCall();
    const model = createAnthropic({ baseURL: `${origin}/anthropic/v1`, apiKey: API_TOKEN })(target.model);
    const result = await generateText({
      model,
      prompt: 'Weather in Paris?',
      maxOutputTokens: 256,
      maxRetries: 0,
      tools: { get_weather: tool({ description: 'Weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0].toolCalls.map((call) => call.toolName)).toEqual(['get_weather']);
    expect(result.text).toBe(target.afterToolResult);

    const streamed = streamText({ model, prompt: 'Hello', maxOutputTokens: 256, maxRetries: 0 });
    let text = '';
    for await (const piece of streamed.textStream) text += piece;
    expect(text).not.toBe('');
    expect(await streamed.finishReason).toBe('stop');
  });

  it('@ai-sdk/anthropic: generateObject answers an object of the schema, or the target refuses the forced single call by name', async () => {
    const model = createAnthropic({ baseURL: `${origin}/anthropic/v1`, apiKey: API_TOKEN })(target.model);
    const ask = generateObject({ model, prompt: 'A city', maxOutputTokens: 256, maxRetries: 0, schema: z.object({ city: z.string() }) });
    // The SDK forces one call of a `json` tool (tool_choice any, disable_parallel_tool_use): Gemini cannot limit a
    // turn to one call and Ollama cannot force a tool, so they refuse, naming the field, rather than answer loosely.
    if (target.forcedSingleCallRefusal) await expect(ask).rejects.toMatchObject({ statusCode: 400, message: expect.stringMatching(target.forcedSingleCallRefusal) });
    else expect((await ask).object).toEqual({ city: expect.any(String) });
  });

  it('top_k reaches a target with top-k sampling under its own name, and a target without it refuses it by name', async () => {
    const ask = client().messages.create({ model: target.model, max_tokens: 16, top_k: 7, messages: [{ role: 'user', content: 'Hi' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    if (target.topKOf) {
      await ask;
      expect(target.topKOf(lastBody(target))).toBe(7);
      return;
    }
    const refused = await ask.catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/^top_k: /) } });
    expect(target.chatRequests()).toHaveLength(0);
  });

  it('countTokens is the upstream\'s own count for Anthropic and an estimate for the other kinds, never a generation', async () => {
    const messages = [{ role: 'user' as const, content: 'Hello there, how are you today?' }];
    const counted = await client().messages.countTokens({ model: target.model, messages });
    expect(target.chatRequests()).toHaveLength(0);
    if (target === anthropicTarget) {
      expect(anthropic.server.requestsTo('/v1/messages/count_tokens')).toHaveLength(1);
      expect(counted.input_tokens).toBe(emulatedTokenCount({ messages }));
    } else expect(counted.input_tokens).toBe(Math.ceil(messages[0].content.length / 4));
  });
});

describe('errors and governance in Anthropic shape', () => {
  async function createKey(settings: Record<string, unknown>): Promise<{ key: string; id: string }> {
    const response = await fetch(`${origin}/v1/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: 't-anthropic-messages', ...settings }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { key: string; id: string };
  }

  it('a bad credential is a 401 authentication_error before the body is read', async () => {
    const error = await client('tg_wrong-key').messages.create({ model: 'openai/gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error as InstanceType<typeof Anthropic.AuthenticationError>).error).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) } });
  });

  it('errors before routing answer in Anthropic shape; the chat body limit applies to messages', async () => {
    const post = (path: string, body: string) =>
      fetch(`${origin}${path}`, { method: 'POST', headers: { 'x-api-key': API_TOKEN, 'content-type': 'application/json' }, body });
    const badJson = await post('/anthropic/v1/messages', '{"model":');
    expect([badJson.status, await badJson.json()]).toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) } }]);
    const noRoute = await post('/anthropic/v1/nowhere', '{}');
    expect([noRoute.status, ((await noRoute.json()) as Json).error.type]).toEqual([404, 'not_found_error']);
    // Over server.body_limit (64 KiB) but within chat_body_limit (1 MiB): Claude Code's requests grow with every tool result.
    const long = JSON.stringify({ model: 'openai/gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x'.repeat(200_000) }] });
    expect((await post('/anthropic/v1/messages', long)).status).toBe(200);
    const tooLong = JSON.stringify({ model: 'openai/gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'x'.repeat(1_100_000) }] });
    const refused = await post('/anthropic/v1/messages', tooLong);
    expect([refused.status, ((await refused.json()) as Json).error.type]).toEqual([413, 'request_too_large']);
  });

  it('a field the gateway cannot honour is refused naming it; an unknown model is not_found_error', async () => {
    const topK = await client().messages.create({ model: 'openai/gpt-test', max_tokens: 8, top_k: 5, messages: [{ role: 'user', content: 'Hi' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(topK).toBeInstanceOf(Anthropic.BadRequestError);
    expect((topK as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/^top_k: /) } });
    const unknown = await client().messages.create({ model: 'nowhere/model', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Anthropic.APIError);
    expect((unknown as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('a key in x-api-key: the ledger row names the route; a model outside its allow-list is a permission_error', async () => {
    const { key, id } = await createKey({ name: 'allow-openai', models: ['openai/gpt-test'] });
    await client(key).messages.create({ model: 'openai/gpt-test', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] });
    const refused = await client(key).messages.create({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((refused as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toEqual({ type: 'error', error: { type: 'permission_error', message: expect.stringContaining('anthropic/claude-sonnet-4-5') } });
    const counted = await client(key).messages.countTokens({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hello' }] }).catch((e: unknown) => e);
    expect(counted).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(await client(key).models.retrieve('anthropic/claude-sonnet-4-5').catch((e: unknown) => e)).toBeInstanceOf(Anthropic.NotFoundError);
    expect(await client(key).models.retrieve('openai/gpt-test')).toMatchObject({ type: 'model', id: 'openai/gpt-test' });
    expect(anthropic.server.requestsTo('/v1/messages')).toHaveLength(0);

    const deadline = Date.now() + 10_000;
    let rows: Json[] = [];
    while (Date.now() < deadline && rows.length === 0) {
      rows = (await sql.query(`SELECT route, provider, model, status FROM ${LEDGER_TABLE} WHERE key_id = $1`, [id]).catch(() => ({ rows: [] }))).rows;
      if (rows.length === 0) await new Promise((wait) => setTimeout(wait, 200));
    }
    expect(rows).toEqual([expect.objectContaining({ route: '/anthropic/v1/messages', provider: 'openai', model: 'gpt-test' })]);
  });

  it('a spent budget throws at once with the SDK default retries: 429 rate_limit_error, x-should-retry false', async () => {
    const { key } = await createKey({ name: 'spent', budget_tokens: 1, period: 'day' });
    const started = Date.now();
    const error = await new Anthropic({ apiKey: key, baseURL: `${origin}/anthropic` })
      .messages.create({ model: 'openai/gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const refusal = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(refusal.error).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringContaining('budget') } });
    expect(refusal.headers.get('x-should-retry')).toBe('false');
    expect(refusal.requestID).toEqual(expect.any(String));
    expect(openai.server.requestsTo('/v1/chat/completions')).toHaveLength(0);
  });

  it('an upstream failure mid-stream ends the stream with an error event the SDK raises', async () => {
    openai.midStreamErrorNext();
    const stream = client().messages.stream({ model: 'openai/gpt-test', max_tokens: 64, messages: [{ role: 'user', content: 'Hello there' }] });
    const events: string[] = [];
    stream.on('streamEvent', (event) => events.push(event.type));
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(events[0]).toBe('message_start');
    expect(events).not.toContain('message_stop');
  });

  it("an overloaded upstream is Anthropic's 529 overloaded_error (Anthropic's 529, Gemini's 503 UNAVAILABLE, OpenAI's 503); another failure stays 502 api_error", async () => {
    anthropic.server.inject({ kind: 'status', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    gemini.server.inject({ kind: 'status', status: 503, body: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } });
    openai.server.inject({ kind: 'status', status: 503, body: { error: { message: 'The engine is currently overloaded.', type: 'server_error', code: null } } });
    for (const model of ['anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-flash', 'openai/gpt-test']) {
      const error = await client().messages.create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect([model, (error as InstanceType<typeof Anthropic.APIError>).status]).toEqual([model, 529]);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    }
    openai.server.inject({ kind: 'status', status: 500, body: { error: { message: 'The server had an error.', type: 'server_error', code: null } } });
    const failed = await client().messages.create({ model: 'openai/gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ status: 502, error: { error: { type: 'api_error' } } });
  });

  it('an overloaded_error mid-stream ends the stream with overloaded_error; the same upstream answers /openai/v1 503 and /gemini/v1beta 503 UNAVAILABLE', async () => {
    anthropic.options.streamError = 'overloaded_error';
    try {
      const stream = client().messages.stream({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hello there' }] });
      const error = await stream.finalMessage().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    } finally {
      anthropic.options.streamError = undefined;
    }
    anthropic.server.inject({ kind: 'status', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }, 2);
    const headers = { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' };
    const openaiAnswer = await fetch(`${origin}/openai/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect([openaiAnswer.status, ((await openaiAnswer.json()) as { error: { type: string } }).error.type]).toEqual([503, 'server_error']);
    const geminiAnswer = await fetch(`${origin}/gemini/v1beta/models/anthropic%2Fclaude-sonnet-4-5:generateContent`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    expect([geminiAnswer.status, ((await geminiAnswer.json()) as { error: { status: string } }).error.status]).toEqual([503, 'UNAVAILABLE']);
  });

  it('a caller that aborts mid-stream ends the upstream request', async () => {
    openai.server.inject({ kind: 'stream', chunkDelayMs: 200 });
    const controller = new AbortController();
    const stream = client().messages.stream(
      { model: 'openai/gpt-test', max_tokens: 64, messages: [{ role: 'user', content: 'a slow answer of many words' }] },
      { signal: controller.signal },
    );
    const aborted = openai.server.waitForAbort();
    stream.on('text', () => controller.abort());
    await stream.done().catch(() => undefined);
    await aborted;
    expect(openai.server.requests[0].aborted).toBe(true);
  });

  it('GET /models lists provider models in Anthropic shape, filtered by the allow-list', async () => {
    const { key } = await createKey({ name: 'list', models: ['openai/gpt-test'] });
    const page = await client(key).models.list();
    expect(page.data.map((model) => model.id)).toEqual(['openai/gpt-test']);
    expect(page.data[0]).toMatchObject({ type: 'model', display_name: 'openai/gpt-test' });
  });
});
