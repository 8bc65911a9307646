/**
 * OpenAI's Responses API at /openai/v1/responses (issue 28, surface 2), driven by clients no one here wrote:
 * the official `openai` client (`responses.create`, `responses.stream`, a function-call loop continued with
 * `previous_response_id`, `text.format` json_schema) and the `ai` SDK's default OpenAI provider
 * (`@ai-sdk/openai`, which calls /responses), routed through the one model routing to the OpenAI, Anthropic,
 * Gemini and Ollama emulators, under governance (API keys of two tenants, a PostgreSQL ledger, allow-lists, budgets).
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { Client } from 'pg';
import { z } from 'zod';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import { GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { ServerProcesses } from './support/server-process';
import { dropResponseTables } from './support/store-cleanup';
import { TestApps } from './support/test-apps';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_TOKEN = 'admin-token-for-openai-responses';
const UPSTREAM_KEY = 'sk-emulator-openai-responses';
const LEDGER_TABLE = `ledger_responses_${randomUUID().slice(0, 8)}`;

let apps: TestApps;
let openaiUpstream: OpenAiEmulator;
let anthropicUpstream: AnthropicEmulator;
let geminiUpstream: GeminiEmulator;
let ollamaUpstream: OllamaEmulator;
let origin: string;
/** A key of tenant `t-resp-a` and one of `t-resp-b`. */
let keyA: string;
let keyB: string;

async function createKey(settings: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const response = await fetch(`${origin}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(settings),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { key: string; id: string };
}

beforeAll(async () => {
  [openaiUpstream, anthropicUpstream, geminiUpstream, ollamaUpstream] = await Promise.all([
    OpenAiEmulator.start({ apiKey: UPSTREAM_KEY, chatModels: ['gpt-test'] }),
    startAnthropicEmulator({ reply: 'Hello from Claude here' }),
    startGeminiEmulator({ reply: 'Hello from Gemini here' }),
    startOllamaEmulator({ models: ['llama3.2:latest'], reply: 'Hello from Ollama here', toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }),
  ]);
  apps = new TestApps('tollgate-openai-responses-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      'api: { token: "api-token-unused-by-openai-responses" }',
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: openai }',
      'providers:',
      `  openai: { url: "${openaiUpstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 10 }`,
      `  anthropic: { url: "${anthropicUpstream.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-haiku-4-5, timeout: 10 }`,
      `  gemini: { url: "${geminiUpstream.url}", api_key: "${GEMINI_EMULATOR_KEY}", chat_model: gemini-2.5-flash, timeout: 10 }`,
      `  ollama: { url: "${ollamaUpstream.url}", chat_model: llama3.2, timeout: 10 }`,
      'governance:',
      `  admin_token: "${ADMIN_TOKEN}"`,
      `  ledger: { store: postgres, url: "${PG_URL}", table: ${LEDGER_TABLE}, flush_interval: 0.2 }`,
      '',
    ].join('\n'),
  ));
  keyA = (await createKey({ tenant: 't-resp-a', name: 'a' })).key;
  keyB = (await createKey({ tenant: 't-resp-b', name: 'b' })).key;
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), geminiUpstream?.close(), ollamaUpstream?.close()]);
  const sql = new Client({ connectionString: PG_URL });
  await sql.connect();
  await sql.query(`DROP TABLE IF EXISTS ${LEDGER_TABLE}, ${LEDGER_TABLE}_daily`);
  await sql.end();
});

const client = (apiKey = keyA) => new OpenAI({ apiKey, baseURL: `${origin}/openai/v1`, maxRetries: 0 });

const weather: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

/** The provider cases: `model` as a caller names it, and the text the emulator answers after the tool result `sunny`. */
const PROVIDERS = [
  { name: 'OpenAI', model: 'openai/gpt-test', afterTool: 'tool said: sunny', plain: (prompt: string) => `echo: ${prompt}` },
  { name: 'Anthropic', model: 'anthropic/claude-haiku-4-5', afterTool: 'Tool results: sunny', plain: () => 'Hello from Claude here' },
  { name: 'Gemini', model: 'gemini/gemini-2.5-flash', afterTool: 'Hello from Gemini here', plain: () => 'Hello from Gemini here' },
  { name: 'Ollama', model: 'ollama/llama3.2', afterTool: 'Tool results: sunny', plain: () => 'Hello from Ollama here' },
];

describe.each(PROVIDERS)('through the openai client to the $name emulator', ({ model, afterTool, plain }) => {
  it('responses.create answers a Response object: output message, usage, instructions as the system prompt', async () => {
    const response = await client().responses.create({ model, instructions: 'Be brief.', input: 'Say hi', max_output_tokens: 64, temperature: 0.5, metadata: { run: 'r1' } });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model, instructions: 'Be brief.', metadata: { run: 'r1' }, store: true });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe(plain('Say hi'));
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: plain('Say hi') }] });
    expect(response.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
  });

  it('responses.stream runs a function-call loop continued with previous_response_id, events in OpenAI order', async () => {
    const types: string[] = [];
    const sequence: number[] = [];
    const first = client().responses.stream({ model, input: 'Weather in Paris?', tools: [weather], tool_choice: 'auto' });
    first.on('event', (event) => {
      types.push(event.type);
      sequence.push(event.sequence_number);
    });
    const called = await first.finalResponse();
    const call = called.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(JSON.parse((call as OpenAI.Responses.ResponseFunctionToolCall).arguments)).toEqual({ city: expect.any(String) });
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types).toContain('response.function_call_arguments.done');
    expect(types.at(-1)).toBe('response.completed');
    expect(sequence).toEqual(sequence.map((_, index) => index));

    const answered = await client()
      .responses.stream({
        model,
        previous_response_id: called.id,
        tools: [weather],
        input: [{ type: 'function_call_output', call_id: (call as OpenAI.Responses.ResponseFunctionToolCall).call_id, output: 'sunny' }],
      })
      .finalResponse();
    expect(answered.output_text).toBe(afterTool);
    expect(answered.previous_response_id).toBe(called.id);
  });

  it('text.format json_schema gets JSON matching the schema', async () => {
    const response = await client().responses.create({
      model,
      input: 'A city and its population',
      text: { format: { type: 'json_schema', name: 'city', strict: true, schema: { type: 'object', properties: { city: { type: 'string' }, population: { type: 'number' } }, required: ['city', 'population'], additionalProperties: false } } },
    });
    expect(JSON.parse(response.output_text)).toEqual({ city: expect.any(String), population: expect.any(Number) });
  });

  it('responses.parse with a zod format answers the parsed object', async () => {
    const response = await client().responses.parse({ model, input: 'A city', text: { format: zodTextFormat(z.object({ city: z.string(), population: z.number() }), 'city') } });
    expect(response.output_parsed).toEqual({ city: expect.any(String), population: expect.any(Number) });
  });
});

describe('through the ai SDK default OpenAI provider (createOpenAI, which calls /responses)', () => {
  const provider = () => createOpenAI({ baseURL: `${origin}/openai/v1`, apiKey: keyA });

  it.each(PROVIDERS)('generateText runs a tool loop on the $name emulator', async ({ model, afterTool }) => {
    const result = await generateText({
      model: provider()(model),
      prompt: 'Weather in Paris?',
      tools: { get_weather: tool({ description: 'Weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: 'get_weather' });
    expect(result.text).toContain(afterTool);
  });

  it.each(PROVIDERS)('generateObject gets an object matching the schema from the $name emulator', async ({ model }) => {
    const { object } = await generateObject({ model: provider()(model), prompt: 'A city', schema: z.object({ city: z.string(), population: z.number() }) });
    expect(object).toEqual({ city: expect.any(String), population: expect.any(Number) });
  });

  it('streamText streams the answer', async () => {
    const result = streamText({ model: provider()('openai/gpt-test'), prompt: 'Stream me' });
    let text = '';
    for await (const piece of result.textStream) text += piece;
    expect(text).toBe('echo: Stream me');
    expect((await result.usage).inputTokens).toBeGreaterThan(0);
  });
});

describe('stored responses', () => {
  it('GET, input_items and DELETE belong to the caller\'s tenant: another tenant\'s id is 404', async () => {
    const created = await client().responses.create({ model: 'openai/gpt-test', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Keep me' }] }] });
    expect((await client().responses.retrieve(created.id)).output_text).toBe('echo: Keep me');
    const items = await client().responses.inputItems.list(created.id);
    expect(items.data).toEqual([expect.objectContaining({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Keep me' }] })]);
    await expect(client(keyB).responses.retrieve(created.id)).rejects.toMatchObject({ status: 404, type: 'invalid_request_error' });
    await expect(client(keyB).responses.create({ model: 'openai/gpt-test', previous_response_id: created.id, input: 'more' })).rejects.toMatchObject({
      status: 400,
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    });
    await expect(client(keyB).responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    await client().responses.delete(created.id);
    await expect(client().responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('store: false keeps nothing', async () => {
    const created = await client().responses.create({ model: 'openai/gpt-test', input: 'Forget me', store: false });
    await expect(client().responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('errors and failures in OpenAI\'s shape', () => {
  it('a tool type the gateway cannot route is refused by name; web_search where no search tool is configured and the model is not OpenAI', async () => {
    await expect(client().responses.create({ model: 'openai/gpt-test', input: 'hi', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] })).rejects.toMatchObject({
      status: 400,
      param: 'tools[0].type',
      code: 'unsupported_value',
    });
    await expect(client().responses.create({ model: 'anthropic/claude-haiku-4-5', input: 'hi', tools: [{ type: 'web_search' }] })).rejects.toMatchObject({
      status: 400,
      param: 'tools[0].type',
      code: 'unsupported_value',
    });
  });

  it('an unknown field is refused naming it', async () => {
    await expect(client().responses.create({ model: 'openai/gpt-test', input: 'hi', frobnicate: 1 } as never)).rejects.toMatchObject({ status: 400, param: 'frobnicate' });
  });

  it('a wrong key is 401 in OpenAI\'s shape', async () => {
    await expect(client('tg_wrong_key').responses.create({ model: 'openai/gpt-test', input: 'hi' })).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('an upstream failure mid-stream ends in response.failed, never a silent close', async () => {
    openaiUpstream.midStreamErrorNext();
    const response = await fetch(`${origin}/openai/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-test', input: 'This answer will break', stream: true }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const events = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(events[0]).toBe('response.created');
    expect(events.at(-1)).toBe('response.failed');
    expect(text).not.toContain('UPSTREAM-BODY-MARKER');
  });

  it('an Anthropic stream that fails overloaded before its first content is an ordinary 503 in OpenAI\'s shape (OpenAI\'s own overloaded answer), without the upstream body', async () => {
    anthropicUpstream.options.streamError = 'overloaded_error';
    try {
      const error = await client().responses.stream({ model: 'anthropic/claude-haiku-4-5', input: 'Break please' }).finalResponse().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ status: 503, type: 'server_error' });
      expect((error as Error).message).not.toContain('anthropic-upstream-body');
    } finally {
      anthropicUpstream.options.streamError = undefined;
    }
  });

  it('a client that aborts mid-stream ends the upstream request', async () => {
    openaiUpstream.server.reset();
    openaiUpstream.server.inject({ kind: 'stream', chunkDelayMs: 200 });
    const controller = new AbortController();
    const stream = client().responses.stream({ model: 'openai/gpt-test', input: 'a slow answer of many words' }, { signal: controller.signal });
    const aborted = openaiUpstream.server.waitForAbort();
    stream.on('response.output_text.delta', () => controller.abort());
    await expect(stream.finalResponse()).rejects.toThrow();
    await aborted;
    expect(openaiUpstream.server.requests.at(-1)!.aborted).toBe(true);
  });

  it('a create body over server.body_limit (1 MiB) but within chat_body_limit is read, as on chat completions', async () => {
    const long = 'word '.repeat(300_000);
    const response = await client().responses.create({ model: 'openai/gpt-test', input: long, store: false });
    expect(response.status).toBe('completed');
  });

  it('a stop at the token limit is status incomplete with max_output_tokens as the reason', async () => {
    const response = await client().responses.create({ model: 'anthropic/claude-haiku-4-5', input: 'Talk', max_output_tokens: 16 });
    // The Anthropic emulator writes one word per token: its five-word reply fits; ask for less with a longer one.
    expect(response.status).toBe('completed');
    anthropicUpstream.options.reply = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    try {
      const cut = await client().responses.create({ model: 'anthropic/claude-haiku-4-5', input: 'Talk', max_output_tokens: 16 });
      expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    } finally {
      anthropicUpstream.options.reply = 'Hello from Claude here';
    }
  });
});

describe('the OpenAPI document', () => {
  it('describes the four routes, the create body as the schema the route validates with, in OpenAPI 3.0 terms', async () => {
    const document = (await (await fetch(`${origin}/docs-json`)).json()) as Record<string, any>;
    const create = document.paths['/openai/v1/responses'].post;
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['model', 'input']);
    expect(JSON.stringify(body)).not.toMatch(/"type":\[|"const":|"type":true/);
    expect(Object.keys(create.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
    expect(create.responses.default.content['application/json'].schema.properties.error.required).toEqual(['message', 'type', 'param', 'code']);
    expect(document.paths['/openai/v1/responses/{id}'].get.summary).toContain('stored response');
    expect(document.paths['/openai/v1/responses/{id}'].delete).toBeDefined();
    expect(document.paths['/openai/v1/responses/{id}/input_items'].get).toBeDefined();
  });
});

describe('governance', () => {
  it('the ledger records each call with the route /openai/v1/responses', async () => {
    const { key, id } = await createKey({ tenant: 't-resp-ledger', name: 'ledger' });
    await client(key).responses.create({ model: 'openai/gpt-test', input: 'Count me' });
    const sql = new Client({ connectionString: PG_URL });
    await sql.connect();
    try {
      let rows: Array<{ route: string; model: string }> = [];
      for (const deadline = Date.now() + 20_000; rows.length === 0 && Date.now() < deadline; await new Promise((wait) => setTimeout(wait, 200))) {
        rows = (await sql.query(`SELECT route, model FROM ${LEDGER_TABLE} WHERE key_id = $1`, [id]).catch(() => ({ rows: [] }))).rows;
      }
      expect(rows).toEqual([{ route: '/openai/v1/responses', model: 'gpt-test' }]);
    } finally {
      await sql.end();
    }
  });

  it('a model the key may not use is refused in OpenAI\'s shape', async () => {
    const { key } = await createKey({ tenant: 't-resp-allow', name: 'allow', models: ['openai/gpt-test'] });
    await expect(client(key).responses.create({ model: 'anthropic/claude-haiku-4-5', input: 'hi' })).rejects.toMatchObject({ status: 403, code: 'model_not_allowed', param: 'model' });
  });

  it('a refused stream is an ordinary JSON error before any event', async () => {
    const { key } = await createKey({ tenant: 't-resp-allow-stream', name: 'allow', models: ['openai/gpt-test'] });
    const response = await fetch(`${origin}/openai/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-haiku-4-5', input: 'hi', stream: true }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: 'model_not_allowed', param: 'model', type: 'invalid_request_error' } });
  });

  it('a spent budget throws at once, with x-should-retry: false', async () => {
    const { key } = await createKey({ tenant: 't-resp-budget', name: 'spent', budget_tokens: 1, period: 'day' });
    const error = await new OpenAI({ apiKey: key, baseURL: `${origin}/openai/v1` }).responses.create({ model: 'openai/gpt-test', input: 'hi' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'budget_exceeded', type: 'insufficient_quota' });
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('x-should-retry')).toBe('false');
  });
});

describe('stored responses in Redis (ai.responses.store: redis), across two server processes', () => {
  const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const TOKEN = 'api-token-for-openai-responses-redis';
  const prefix = `tollgate-test:responses-${randomUUID().slice(0, 8)}:`;
  const servers = new ServerProcesses();
  let first: string;
  let second: string;

  /** Two processes of the built server on the shared Redis store: only Redis can carry a conversation across. */
  beforeAll(async () => {
    const configFile = join(apps.work, 'responses-redis.yaml');
    writeFileSync(
      configFile,
      [
        'version: 1',
        `api: { token: "${TOKEN}" }`,
        `ai: { retry_attempts: 0, enable_fallback: false, default_provider: openai, responses: { store: redis, url: "${REDIS_URL}", key_prefix: "${prefix}", retention: 60 } }`,
        'providers:',
        `  openai: { url: "${openaiUpstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 10 }`,
        `  anthropic: { url: "${anthropicUpstream.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-haiku-4-5, timeout: 10 }`,
        '',
      ].join('\n'),
    );
    [first, second] = (await Promise.all([servers.start(configFile, apps.work).url, servers.start(configFile, apps.work).url])).map((url) => `${url}/openai/v1`);
  }, 120_000);

  afterAll(() => servers.stopAll());

  it.each(PROVIDERS.slice(0, 2))('a function-call loop started on one process continues on the other ($name)', async ({ model, afterTool }) => {
    const called = await new OpenAI({ apiKey: TOKEN, baseURL: first, maxRetries: 0 }).responses.stream({ model, input: 'Weather in Paris?', tools: [weather] }).finalResponse();
    const call = called.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const other = new OpenAI({ apiKey: TOKEN, baseURL: second, maxRetries: 0 });
    const answered = await other.responses.create({ model, previous_response_id: called.id, tools: [weather], input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
    expect(answered.output_text).toBe(afterTool);
    expect((await other.responses.retrieve(called.id)).id).toBe(called.id);
    await other.responses.delete(called.id);
    await expect(new OpenAI({ apiKey: TOKEN, baseURL: first, maxRetries: 0 }).responses.retrieve(called.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('stored responses in PostgreSQL (ai.responses.store: postgres), across two server processes', () => {
  const ADMIN = 'admin-token-for-openai-responses-postgres';
  const responsesTable = `responses_${randomUUID().slice(0, 8)}`;
  const keysTable = `keys_responses_${randomUUID().slice(0, 8)}`;
  const servers = new ServerProcesses();
  let first: string;
  let second: string;
  let ownerKey: string;
  let otherTenantKey: string;

  /** Two processes of the built server sharing the response store and the API keys on PostgreSQL. */
  beforeAll(async () => {
    const configFile = join(apps.work, 'responses-postgres.yaml');
    writeFileSync(
      configFile,
      [
        'version: 1',
        'api: { token: "api-token-unused-by-responses-postgres" }',
        `ai: { retry_attempts: 0, enable_fallback: false, default_provider: openai, responses: { store: postgres, url: "${PG_URL}", table: ${responsesTable}, retention: 60 } }`,
        'providers:',
        `  openai: { url: "${openaiUpstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 10 }`,
        `  anthropic: { url: "${anthropicUpstream.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-haiku-4-5, timeout: 10 }`,
        'governance:',
        `  admin_token: "${ADMIN}"`,
        `  keys: { store: postgres, url: "${PG_URL}", table: ${keysTable} }`,
        '',
      ].join('\n'),
    );
    const origins = await Promise.all([servers.start(configFile, apps.work).url, servers.start(configFile, apps.work).url]);
    [first, second] = origins.map((url) => `${url}/openai/v1`);
    const keyOf = async (tenant: string) => {
      const response = await fetch(`${origins[0]}/v1/admin/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tenant, name: tenant }),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { key: string }).key;
    };
    [ownerKey, otherTenantKey] = [await keyOf('t-pg-a'), await keyOf('t-pg-b')];
  }, 120_000);

  afterAll(async () => {
    await servers.stopAll();
    await dropResponseTables(PG_URL, responsesTable);
    const sql = new Client({ connectionString: PG_URL });
    await sql.connect();
    await sql.query(`DROP TABLE IF EXISTS ${keysTable}`);
    await sql.end();
  });

  it.each(PROVIDERS.slice(0, 2))('a function-call loop started on one process continues on the other ($name)', async ({ model, afterTool }) => {
    const called = await new OpenAI({ apiKey: ownerKey, baseURL: first, maxRetries: 0 }).responses.stream({ model, input: 'Weather in Paris?', tools: [weather] }).finalResponse();
    const call = called.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const other = new OpenAI({ apiKey: ownerKey, baseURL: second, maxRetries: 0 });
    const answered = await other.responses.create({ model, previous_response_id: called.id, tools: [weather], input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
    expect(answered.output_text).toBe(afterTool);
    expect((await other.responses.retrieve(called.id)).id).toBe(called.id);
    const inputItems = await new OpenAI({ apiKey: ownerKey, baseURL: first, maxRetries: 0 }).responses.inputItems.list(answered.id);
    expect(inputItems.data).toMatchObject([{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }]);
    await other.responses.delete(called.id);
    await expect(new OpenAI({ apiKey: ownerKey, baseURL: first, maxRetries: 0 }).responses.retrieve(called.id)).rejects.toMatchObject({ status: 404 });
  });

  it("another tenant's key reads, continues and deletes nothing of it, on either process", async () => {
    const created = await new OpenAI({ apiKey: ownerKey, baseURL: first, maxRetries: 0 }).responses.create({ model: 'openai/gpt-test', input: 'mine' });
    for (const baseURL of [first, second]) {
      const intruder = new OpenAI({ apiKey: otherTenantKey, baseURL, maxRetries: 0 });
      await expect(intruder.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404, type: 'invalid_request_error' });
      await expect(intruder.responses.create({ model: 'openai/gpt-test', previous_response_id: created.id, input: 'more' })).rejects.toMatchObject({
        status: 400,
        param: 'previous_response_id',
      });
      await expect(intruder.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    }
    expect((await new OpenAI({ apiKey: ownerKey, baseURL: second, maxRetries: 0 }).responses.retrieve(created.id)).output_text).toBe('echo: mine');
  });
});
