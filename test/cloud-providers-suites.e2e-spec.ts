/**
 * The cloud kinds through the suites the vendor-direct kinds pass (issue 30), one table over Azure OpenAI, Vertex AI
 * (Gemini and Claude) and Bedrock: the Vercel `ai` SDK on /openai/v1, the three dialects with their official clients
 * (`@anthropic-ai/sdk` on /anthropic/v1, `openai` responses.create/stream, `@google/genai` on /gemini/v1beta), a
 * function-call loop in each, and governance: a key with a dollar budget, its ledger rows naming the registration
 * and the model that answered with the upstream's usage and its cost, cache reads and writes counted once; a spent
 * budget refused before any upstream call.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { FunctionCallingConfigMode, GoogleGenAI, Type, type Content } from '@google/genai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { Client } from 'pg';
import { z } from 'zod';
import { CONTEXT_MANAGEMENT_BETA } from './emulators/anthropic-emulator';
import { AzureOpenAiEmulator } from './emulators/azure-openai-emulator';
import { BEDROCK_API_KEY, BEDROCK_REGION, BedrockEmulator } from './emulators/bedrock-emulator';
import type { LoggedRequest } from './emulators/emulator-server';
import { VERTEX_LOCATION, VERTEX_PROJECT, VertexEmulator } from './emulators/vertex-emulator';
import { bearerCall } from './support/bearer-call';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-cloud-suites';
const ADMIN_TOKEN = 'admin-token-for-cloud-suites';
const AZURE_KEY = 'azure-key-for-cloud-suites';
const VERTEX_TOKEN = 'ya29.static-for-cloud-suites';
const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const LEDGER_TABLE = `cloud_suites_ledger_${process.pid}`;
const BEDROCK_CLAUDE = 'anthropic.claude-sonnet-4-5-20250929-v1:0';

type Json = Record<string, any>;

let azure: AzureOpenAiEmulator;
let vertex: VertexEmulator;
let bedrock: BedrockEmulator;
let apps: TestApps;
let origin: string;
let sql: Client;

/** One cloud target: the model a caller names, and the chat requests its upstream received. */
interface Target {
  name: string;
  provider: string;
  model: string;
  chatRequests(): LoggedRequest[];
}

const TARGETS: Target[] = [
  // A Responses request goes to Azure's v1 /responses as written (docs/decisions.md B19); every other one to chat completions.
  { name: 'Azure OpenAI', provider: 'azure', model: 'gpt-4o', chatRequests: () => azure.server.requests.filter((r) => /\/(chat\/completions|responses)$/.test(r.path)) },
  { name: 'Vertex Gemini', provider: 'vertex', model: 'gemini-2.5-flash', chatRequests: () => vertex.server.requests.filter((r) => /:(stream)?generateContent$/i.test(r.path)) },
  { name: 'Vertex Claude', provider: 'vertex', model: 'claude-sonnet-4-5', chatRequests: () => vertex.server.requests.filter((r) => /:(stream)?rawPredict$/i.test(r.path)) },
  { name: 'Bedrock', provider: 'bedrock', model: BEDROCK_CLAUDE, chatRequests: () => bedrock.server.requests.filter((r) => /\/converse(-stream)?$/.test(r.path)) },
];

/** Prices per million tokens for every target, cache writes dearer than input, reads cheaper. */
const PRICES = { input: 2, output: 10, cached_input: 0.5, cache_write: 3 };

beforeAll(async () => {
  [azure, vertex, bedrock] = await Promise.all([
    AzureOpenAiEmulator.startAzure({ apiKey: AZURE_KEY, deployments: { 'prod-4o': 'gpt-4o' } }),
    VertexEmulator.start({ staticTokens: [VERTEX_TOKEN] }),
    BedrockEmulator.start(),
  ]);
  sql = new Client({ connectionString: PG_URL });
  await sql.connect();
  apps = new TestApps('tollgate-cloud-suites-', {});
  const vertexSection = `vertex: { project: ${VERTEX_PROJECT}, location: ${VERTEX_LOCATION}, access_token: "${VERTEX_TOKEN}" }`;
  const priced = TARGETS.map((t) => `      "${t.provider}/${t.model}": ${JSON.stringify(PRICES)}`);
  ({ origin } = await apps.listen(
    [
      'version: 1',
      `api: { token: "${TOKEN}" }`,
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: azure }',
      'providers:',
      `  azure: { kind: azure_openai, url: "${azure.url}", api_key: "${AZURE_KEY}", chat_model: gpt-4o, timeout: 5, azure: { deployments: { gpt-4o: prod-4o } } }`,
      `  vertex: { url: "${vertex.url}", chat_model: gemini-2.5-flash, models: [claude-sonnet-4-5], timeout: 5, ${vertexSection} }`,
      `  bedrock: { url: "${bedrock.url}", api_key: "${BEDROCK_API_KEY}", chat_model: "${BEDROCK_CLAUDE}", timeout: 5, bedrock: { region: ${BEDROCK_REGION} } }`,
      'governance:',
      `  admin_token: "${ADMIN_TOKEN}"`,
      `  ledger: { store: postgres, url: "${PG_URL}", table: ${LEDGER_TABLE}, flush_interval: 0.2 }`,
      '  pricing:',
      '    models:',
      ...priced,
      '',
    ].join('\n'),
  ));
});

afterAll(async () => {
  await apps?.close();
  await sql?.query(`DROP TABLE IF EXISTS ${LEDGER_TABLE}, ${LEDGER_TABLE}_daily`).catch(() => undefined);
  await sql?.end();
  await Promise.all([azure?.close(), vertex?.close(), bedrock?.close()]);
});

beforeEach(() => {
  for (const server of [azure.server, vertex.server, vertex.gemini.server, vertex.anthropic.server, bedrock.server]) server.reset();
  vertex.gemini.options.cachedTokens = undefined;
  bedrock.options.cacheReadTokens = undefined;
  bedrock.options.cacheWriteTokens = undefined;
  bedrock.cached.clear();
});

/** True when the upstream's last chat request carried the tool result `sunny` back to the model. */
const toolResultReached = (target: Target) => JSON.stringify(target.chatRequests().at(-1)?.body).includes('sunny');

describe.each(TARGETS)('the Vercel ai SDK on /openai/v1 to $name', (target) => {
  const model = () => createOpenAICompatible({ name: 'tollgate', baseURL: `${origin}/openai/v1`, apiKey: TOKEN, includeUsage: true })(`${target.provider}/${target.model}`);
  const weather = tool({ description: 'Weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' });

  it('generateText answers text with usage', async () => {
    const result = await generateText({ model: model(), system: 'Be brief.', prompt: 'Hello' });
    expect(result.text).toMatch(/\S/);
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(target.chatRequests()).toHaveLength(1);
  });

  it('streamText streams the same kind of answer, usage at the end', async () => {
    const result = streamText({ model: model(), prompt: 'Hello' });
    expect(await result.text).toMatch(/\S/);
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
  });

  it('generateText with a tool runs the loop: a call, its result back upstream, then text', async () => {
    const result = await generateText({ model: model(), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(result.steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(result.steps[0].toolCalls.map((call) => call.toolName)).toEqual(['weather']);
    expect(result.text).toMatch(/\S/);
    expect(toolResultReached(target)).toBe(true);
  });

  it('streamText with a tool runs the same loop', async () => {
    const result = streamText({ model: model(), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(await result.text).toMatch(/\S/);
    expect((await result.steps).map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(toolResultReached(target)).toBe(true);
  });
});

describe.each(TARGETS)('@anthropic-ai/sdk on /anthropic/v1 to $name', (target) => {
  const client = () => new Anthropic({ apiKey: TOKEN, baseURL: `${origin}/anthropic`, maxRetries: 0 });
  const model = `${target.provider}/${target.model}`;
  const weather: Anthropic.Tool = { name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

  it('messages.create answers a Message with usage; system blocks with cache_control are accepted', async () => {
    const message = await client().messages.create({
      model,
      max_tokens: 64,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model, stop_reason: 'end_turn' });
    expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/\S/) });
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(JSON.stringify(target.chatRequests().at(-1)?.body)).toContain('Be brief.');
  });

  it('messages.stream yields the text and a final Message', async () => {
    const stream = client().messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(text).toMatch(/\S/);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  it('runs a tool loop: tool_use, then a tool_result the upstream receives', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client().messages.create({ model, max_tokens: 128, tools: [weather], messages });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(use?.name).toBe('get_weather');
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use!.id, content: 'sunny' }] });
    const second = await client().messages.create({ model, max_tokens: 128, tools: [weather], messages });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content.some((block) => block.type === 'text')).toBe(true);
    expect(toolResultReached(target)).toBe(true);
  });
});

describe.each(TARGETS)('the openai Responses API to $name', (target) => {
  const client = () => new OpenAI({ apiKey: TOKEN, baseURL: `${origin}/openai/v1`, maxRetries: 0 });
  const model = `${target.provider}/${target.model}`;
  const weather: OpenAI.Responses.FunctionTool = {
    type: 'function',
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
  };

  it('responses.create answers a completed Response with usage', async () => {
    const response = await client().responses.create({ model, instructions: 'Be brief.', input: 'Say hi', max_output_tokens: 64 });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model });
    expect(response.output_text).toMatch(/\S/);
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
  });

  it('responses.stream runs a function-call loop continued with previous_response_id', async () => {
    const called = await client().responses.stream({ model, input: 'Weather in Paris?', tools: [weather] }).finalResponse();
    const call = called.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall | undefined;
    expect(call).toMatchObject({ name: 'get_weather', status: 'completed' });
    const answered = await client()
      .responses.stream({ model, previous_response_id: called.id, tools: [weather], input: [{ type: 'function_call_output', call_id: call!.call_id, output: 'sunny' }] })
      .finalResponse();
    expect(answered.status).toBe('completed');
    expect(answered.output_text).toMatch(/\S/);
    expect(toolResultReached(target)).toBe(true);
  });
});

describe.each(TARGETS)('@google/genai on /gemini/v1beta to $name', (target) => {
  const client = () => new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: `${origin}/gemini` } });
  const model = `${target.provider}/${target.model}`;
  const weather = { name: 'get_weather', description: 'Weather in a city', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] } };

  it('generateContent answers text, STOP and usage', async () => {
    const response = await client().models.generateContent({ model, contents: 'Hello', config: { systemInstruction: 'Be brief.', maxOutputTokens: 64 } });
    expect(response.text).toMatch(/\S/);
    expect(response.candidates?.[0].finishReason).toBe('STOP');
    expect(response.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    expect(response.modelVersion).toBe(model);
  });

  it('generateContentStream yields text, and usage on the last chunk', async () => {
    const chunks = [];
    for await (const chunk of await client().models.generateContentStream({ model, contents: 'Hello' })) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.text ?? '').join('')).toMatch(/\S/);
    expect(chunks.at(-1)?.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
  });

  it('runs a function-calling loop', async () => {
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
    const config = { tools: [{ functionDeclarations: [weather] }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } } };
    const first = await client().models.generateContent({ model, contents, config });
    expect(first.functionCalls?.map((call) => call.name)).toEqual(['get_weather']);
    contents.push(first.candidates![0].content!, { role: 'user', parts: first.functionCalls!.map((call) => ({ functionResponse: { id: call.id, name: call.name!, response: { output: 'sunny' } } })) });
    const second = await client().models.generateContent({ model, contents, config: { tools: config.tools } });
    expect(second.functionCalls).toBeUndefined();
    expect(second.text).toMatch(/\S/);
    expect(toolResultReached(target)).toBe(true);
  });
});

describe('Bedrock cache points and documents', () => {
  const client = () => new Anthropic({ apiKey: TOKEN, baseURL: `${origin}/anthropic`, maxRetries: 0 });
  const model = `bedrock/${BEDROCK_CLAUDE}`;
  const PDF = Buffer.from('%PDF-1.4 emulated').toString('base64');
  const request = (text: string): Anthropic.MessageCreateParamsNonStreaming => ({
    model,
    max_tokens: 64,
    system: [{ type: 'text', text: 'You read reports. '.repeat(20), cache_control: { type: 'ephemeral', ttl: '1h' } }],
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, cache_control: { type: 'ephemeral', ttl: '1h' } }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'document', title: 'Q3 report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
          { type: 'text', text: 'Summarise the report.', cache_control: { type: 'ephemeral' } },
        ],
      },
      { role: 'assistant', content: 'It grew.' },
      { role: 'user', content: text },
    ],
  });

  it("cache_control becomes cachePoint blocks after the system text, the tool spec and the message; a PDF a named document block", async () => {
    const message = await client().messages.create(request('By how much?'));
    expect(message.content[0]).toMatchObject({ type: 'text' });
    const body = bedrock.server.requests.at(-1)!.body as Json;
    expect(body.system).toEqual([{ text: expect.stringContaining('You read reports.') }, { cachePoint: { type: 'default', ttl: '1h' } }]);
    expect(body.toolConfig.tools).toEqual([{ toolSpec: expect.objectContaining({ name: 'get_weather' }) }, { cachePoint: { type: 'default', ttl: '1h' } }]);
    expect(body.messages[0].content).toEqual([
      { document: { format: 'pdf', name: 'Q3 report', source: { bytes: PDF } } },
      { text: 'Summarise the report.' },
      { cachePoint: { type: 'default' } },
    ]);
  });

  it('the prefix written once is read the next time: cache writes then reads reach the client and the ledger, counted once', async () => {
    const { key, id } = await (async () => {
      const created = await bearerCall(origin, 'POST', '/v1/admin/keys', ADMIN_TOKEN, { tenant: 't-cloud-suites', name: 'bedrock-cache', budget_usd: 5, period: 'day' });
      return { key: created.body.key as string, id: created.body.id as string };
    })();
    const keyed = new Anthropic({ apiKey: key, baseURL: `${origin}/anthropic`, maxRetries: 0 });
    const first = await keyed.messages.create(request('First question?'));
    const second = await keyed.messages.create(request('Second question?'));
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens ?? 0).toBe(0);

    const deadline = Date.now() + 10_000;
    let rows: Json[] = [];
    while (Date.now() < deadline && rows.length < 2) {
      rows = (await sql.query(`SELECT input_tokens, cached_tokens, cost_micros FROM ${LEDGER_TABLE} WHERE key_id = $1 ORDER BY time`, [id]).catch(() => ({ rows: [] }))).rows;
      if (rows.length < 2) await new Promise((wait) => setTimeout(wait, 200));
    }
    const [written, read] = [first.usage, second.usage];
    const total = (u: Anthropic.Usage) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    expect(rows.map((row) => [Number(row.input_tokens), Number(row.cached_tokens)])).toEqual([
      [total(written), 0],
      [total(read), read.cache_read_input_tokens],
    ]);
    const writes = written.cache_creation_input_tokens!;
    expect(Number(rows[0].cost_micros)).toBe(Math.round(written.input_tokens * PRICES.input + writes * PRICES.cache_write + written.output_tokens * PRICES.output));
  });

  it('a document without text beside it is a 400 naming the field, before Bedrock is called', async () => {
    const refused = await client()
      .messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }] }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('messages[0].content: bedrock needs a text part beside a document');
    expect(bedrock.server.requests).toHaveLength(0);
  });

  it('a document to a kind without document input is refused naming it, before any upstream call', async () => {
    const refused = await client()
      .messages.create({
        model: 'vertex/gemini-2.5-flash',
        max_tokens: 16,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }, { type: 'text', text: 'Read it.' }] }],
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('does not support document input');
    expect(vertex.server.requests).toHaveLength(0);
  });

  it('the emulator refuses what Converse refuses: a cachePoint first in a message, a longer ttl after a shorter one, a bad document name', async () => {
    const converse = (body: Json) =>
      fetch(`${bedrock.url}/model/${encodeURIComponent(BEDROCK_CLAUDE)}/converse`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BEDROCK_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const point = (ttl?: string) => ({ cachePoint: { type: 'default', ...(ttl ? { ttl } : {}) } });
    const cases: Json[] = [
      { messages: [{ role: 'user', content: [point(), { text: 'hi' }] }] },
      { system: [{ text: 's' }, point('5m')], messages: [{ role: 'user', content: [{ text: 'hi' }, point('1h')] }] },
      { messages: [{ role: 'user', content: [{ document: { format: 'pdf', name: 'a.pdf', source: { bytes: PDF } } }, { text: 'hi' }] }] },
      { messages: [{ role: 'user', content: [{ text: 'hi' }, point(), { text: 'a' }, point(), { text: 'b' }, point(), { text: 'c' }, point(), { text: 'd' }, point()] }] },
    ];
    for (const body of cases) {
      const answer = await converse(body);
      expect([answer.status, answer.headers.get('x-amzn-errortype')?.split(':')[0]]).toEqual([400, 'ValidationException']);
    }
  });
});

describe('Claude on Vertex as a native Anthropic target', () => {
  const client = (headers: Record<string, string> = {}) => new Anthropic({ apiKey: TOKEN, baseURL: `${origin}/anthropic`, maxRetries: 0, defaultHeaders: headers });
  const model = 'vertex/claude-sonnet-4-5';
  const rawPredicts = () => vertex.server.requests.filter((r) => /:(stream)?rawPredict$/i.test(r.path));

  it('the caller body goes as written: cache_control, a web search server tool, context_management under its beta; the answer is Vertex\'s', async () => {
    const message = await client({ 'anthropic-beta': CONTEXT_MANAGEMENT_BETA }).messages.create({
      model,
      max_tokens: 64,
      system: [{ type: 'text', text: 'You answer with sources.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?', cache_control: { type: 'ephemeral' } }] }],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(message.model).toBe(model);
    expect(message.content.map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    const [sent] = rawPredicts();
    expect(sent.headers['anthropic-beta']).toBe(CONTEXT_MANAGEMENT_BETA);
    expect(sent.body).toMatchObject({
      anthropic_version: 'vertex-2023-10-16',
      system: [{ type: 'text', text: 'You answer with sources.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?', cache_control: { type: 'ephemeral' } }] }],
    });
    expect(sent.body).not.toHaveProperty('model');
  });

  it('a stream is Vertex\'s events as sent: the server tool blocks reach the client', async () => {
    const stream = client().messages.stream({ model, max_tokens: 64, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    const final = await stream.finalMessage();
    expect(final.content.map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    expect(rawPredicts().at(-1)!.path).toMatch(/:streamRawPredict$/);
  });

  it.each([
    ['mcp_servers', { mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }] }, 'mcp_servers'],
    ['a web fetch tool', { tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }] }, "tools.0.type: server tool 'web_fetch_20250910'"],
    [
      'a Files API document',
      { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_1' } }, { type: 'text', text: 'Read it.' }] }] },
      "messages.0.content.0.source.type: 'file' document",
    ],
  ])('%s, which only Anthropic\'s own API has, is refused naming it before Vertex is called', async (_name, fields, named) => {
    const answer = await bearerCall(origin, 'POST', '/anthropic/v1/messages', TOKEN, { model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], ...fields });
    expect(answer.status).toBe(400);
    expect((answer.body as Json).error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining(`${named}: only Anthropic's own API takes it`) });
    expect(rawPredicts()).toHaveLength(0);
  });

  it('the emulator refuses what Vertex refuses: mcp_servers, web fetch, a file document, a first-party beta', async () => {
    const url = `${vertex.url}/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/anthropic/models/claude-sonnet-4-5:rawPredict`;
    const base = { anthropic_version: 'vertex-2023-10-16', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] };
    const post = (body: Json, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', headers: { authorization: `Bearer ${VERTEX_TOKEN}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then((r) => r.status);
    expect(await post(base)).toBe(200);
    expect(await post({ ...base, mcp_servers: [] })).toBe(400);
    expect(await post({ ...base, tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] })).toBe(400);
    expect(await post({ ...base, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'f' } }] }] })).toBe(400);
    expect(await post(base, { 'anthropic-beta': 'files-api-2025-04-14' })).toBe(400);
  });

  it('a beta Vertex refuses is left out: the call goes once more without it, and later calls never send it', async () => {
    const betas = 'interleaved-thinking-2025-05-14,effort-2025-11-24';
    const first = await client({ 'anthropic-beta': betas }).messages.create({ model, max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] });
    expect(first.content[0].type).toBe('text');
    expect(rawPredicts().map((sent) => sent.headers['anthropic-beta'])).toEqual([betas, 'interleaved-thinking-2025-05-14']);
    const stream = client({ 'anthropic-beta': `${betas},adaptive-thinking-2026-01-28` }).messages.stream({ model, max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] });
    await stream.finalMessage();
    expect(rawPredicts().slice(2).map((sent) => sent.headers['anthropic-beta'])).toEqual([
      'interleaved-thinking-2025-05-14,adaptive-thinking-2026-01-28',
      'interleaved-thinking-2025-05-14',
    ]);
    await client({ 'anthropic-beta': betas }).messages.create({ model, max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] });
    expect(rawPredicts().slice(4).map((sent) => sent.headers['anthropic-beta'])).toEqual(['interleaved-thinking-2025-05-14']);
  });

  it('count_tokens asks Vertex\'s count-tokens with the caller\'s body and the routed model', async () => {
    const counted = await client().messages.countTokens({ model, messages: [{ role: 'user', content: 'Count me' }] });
    const [sent] = vertex.server.requests.filter((r) => r.path.endsWith('/count-tokens:rawPredict'));
    expect(sent.body).toMatchObject({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Count me' }] });
    expect(counted.input_tokens).toBe(JSON.stringify([{ role: 'user', content: 'Count me' }]).length);
  });
});

describe('governance in front of the cloud kinds', () => {
  async function createKey(settings: Json): Promise<{ key: string; id: string }> {
    const created = await bearerCall(origin, 'POST', '/v1/admin/keys', ADMIN_TOKEN, { tenant: 't-cloud-suites', ...settings });
    expect(created.status).toBe(201);
    return { key: created.body.key as string, id: created.body.id as string };
  }

  async function ledgerRows(keyId: string, count: number): Promise<Json[]> {
    const deadline = Date.now() + 10_000;
    let rows: Json[] = [];
    while (Date.now() < deadline) {
      rows = (
        await sql
          .query(`SELECT provider, model, operation, input_tokens, output_tokens, cached_tokens, cost_micros, status, estimated FROM ${LEDGER_TABLE} WHERE key_id = $1 ORDER BY time`, [keyId])
          .catch(() => ({ rows: [] }))
      ).rows;
      if (rows.length >= count) return rows;
      await new Promise((wait) => setTimeout(wait, 200));
    }
    return rows;
  }

  it.each(TARGETS)('a key with a dollar budget calls $name: its ledger row names the registration and the model, with the usage and its cost', async (target) => {
    const { key, id } = await createKey({ name: `budget-${target.name}`, budget_usd: 5, period: 'day' });
    const client = new OpenAI({ apiKey: key, baseURL: `${origin}/openai/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: `${target.provider}/${target.model}`, messages: [{ role: 'user', content: 'Hello' }] });
    const usage = completion.usage!;
    const [row] = await ledgerRows(id, 1);
    expect(row).toMatchObject({ provider: target.provider, model: target.model, operation: 'generate', status: 'ok', estimated: false });
    expect([Number(row.input_tokens), Number(row.output_tokens), Number(row.cached_tokens)]).toEqual([usage.prompt_tokens, usage.completion_tokens, 0]);
    expect(Number(row.cost_micros)).toBe(Math.round(usage.prompt_tokens * PRICES.input + usage.completion_tokens * PRICES.output));
  });

  it('cache reads and writes are counted once: parts of the input, each priced at its own rate (Bedrock, and Gemini on Vertex)', async () => {
    const { key, id } = await createKey({ name: 'cache', budget_usd: 5, period: 'day' });
    const client = new OpenAI({ apiKey: key, baseURL: `${origin}/openai/v1`, maxRetries: 0 });
    bedrock.options.cacheReadTokens = 100;
    bedrock.options.cacheWriteTokens = 40;
    const onBedrock = await client.chat.completions.create({ model: `bedrock/${BEDROCK_CLAUDE}`, messages: [{ role: 'user', content: 'Hello' }] });
    vertex.gemini.options.cachedTokens = 30;
    const onVertex = await client.chat.completions.create({ model: 'vertex/gemini-2.5-flash', messages: [{ role: 'user', content: 'Hello' }] });
    const [bedrockRow, vertexRow] = await ledgerRows(id, 2);

    const uncached = onBedrock.usage!.prompt_tokens - 140;
    expect(uncached).toBeGreaterThan(0);
    expect(onBedrock.usage!.prompt_tokens_details?.cached_tokens).toBe(100);
    expect([Number(bedrockRow.input_tokens), Number(bedrockRow.cached_tokens)]).toEqual([uncached + 140, 100]);
    expect(Number(bedrockRow.cost_micros)).toBe(Math.round(uncached * PRICES.input + 100 * PRICES.cached_input + 40 * PRICES.cache_write + onBedrock.usage!.completion_tokens * PRICES.output));

    const prompt = onVertex.usage!.prompt_tokens;
    expect([Number(vertexRow.input_tokens), Number(vertexRow.cached_tokens)]).toEqual([prompt, 30]);
    expect(Number(vertexRow.cost_micros)).toBe(Math.round((prompt - 30) * PRICES.input + 30 * PRICES.cached_input + onVertex.usage!.completion_tokens * PRICES.output));
  });

  it('a spent token budget is refused before any cloud upstream is called', async () => {
    const { key } = await createKey({ name: 'spent', budget_tokens: 1, period: 'day' });
    const client = new OpenAI({ apiKey: key, baseURL: `${origin}/openai/v1`, maxRetries: 0 });
    for (const target of TARGETS) {
      const refused = await client.chat.completions.create({ model: `${target.provider}/${target.model}`, messages: [{ role: 'user', content: 'Hello' }] }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      expect((refused as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('budget_exceeded');
      expect(target.chatRequests()).toHaveLength(0);
    }
  });
});
