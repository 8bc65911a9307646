/**
 * Responses to an OpenAI upstream lose nothing (docs/decisions.md B19): the official `openai` client through
 * Tollgate's `/openai/v1/responses` to the OpenAI emulator's `/v1/responses`, whose reasoning model seals its
 * reasoning (`encrypted_content`, when `include` asks) and refuses a sealed item it did not write. The body arrives
 * as the caller wrote it (only model, stream and store set), encrypted reasoning makes the round trip Codex makes,
 * the answer and the stream come back as the upstream sent them, and Tollgate's store, tenancy, governance and
 * fallback hold as on every other path.
 */
import OpenAI from 'openai';
import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import { AzureOpenAiEmulator } from './emulators/azure-openai-emulator';
import { OpenAiEmulator, UPSTREAM_MARKER } from './emulators/openai-emulator';
import { TestApps } from './support/test-apps';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_TOKEN = 'admin-token-for-responses-passthrough';
const UPSTREAM_KEY = 'sk-emulator-responses-passthrough';
const AZURE_KEY = 'azure-key-responses-passthrough';
const LEDGER_TABLE = `ledger_responses_passthrough_${randomUUID().slice(0, 8)}`;
const MODEL = 'openai/gpt-5-test';

type Json = Record<string, any>;

let openai: OpenAiEmulator;
let anthropic: AnthropicEmulator;
let azure: AzureOpenAiEmulator;
let apps: TestApps;
let origin: string;
let sql: Client;
/** Keys of tenant `t-pass-a` (held to a token budget) and `t-pass-b`. */
let keyA: string;
let keyB: string;

const weather: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

const client = (apiKey = keyA) => new OpenAI({ apiKey, baseURL: `${origin}/openai/v1`, maxRetries: 0 });
const upstreamBodies = () => openai.server.requestsTo('/v1/responses').map((sent) => sent.body as Json);

/** What Codex sends on each turn: no server-side storage, encrypted reasoning asked for, the whole input each time. */
const codexTurn = (input: OpenAI.Responses.ResponseInput) => ({
  model: MODEL,
  instructions: 'You are a coding agent.',
  input,
  tools: [weather],
  tool_choice: 'auto' as const,
  parallel_tool_calls: false,
  reasoning: { effort: 'medium' as const, summary: 'auto' as const },
  store: false,
  include: ['reasoning.encrypted_content' as const],
  prompt_cache_key: 'session-42',
});

/** The stream the emulator wrote, with the caller's echo in the events carrying the Response: what Tollgate must relay. */
function relayedStream(sent: string, echo: Json): string {
  return sent.replace(/^event: (response\.(?:created|in_progress|completed))\ndata: (.*)$/gm, (_line, event: string, data: string) => {
    const parsed = JSON.parse(data) as Json;
    parsed.response = { ...parsed.response, ...echo };
    return `event: ${event}\ndata: ${JSON.stringify(parsed)}`;
  });
}

/** A raw streamed answer, and the events' data parsed. */
async function rawStream(body: Json, apiKey = keyA): Promise<{ status: number; text: string; events: Json[] }> {
  const response = await fetch(`${origin}/openai/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const text = await response.text();
  const events = [...text.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]) as Json);
  return { status: response.status, text, events };
}

async function createKey(settings: Json): Promise<{ key: string; id: string }> {
  const response = await fetch(`${origin}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(settings),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { key: string; id: string };
}

beforeAll(async () => {
  [openai, anthropic, azure] = await Promise.all([
    OpenAiEmulator.start({ apiKey: UPSTREAM_KEY, chatModels: ['gpt-5-test'], reasoningModels: ['gpt-5-test'] }),
    startAnthropicEmulator({ reply: 'Hello from Claude here' }),
    AzureOpenAiEmulator.startAzure({ apiKey: AZURE_KEY, deployments: { 'prod-5': 'gpt-5-test' } }),
  ]);
  sql = new Client({ connectionString: PG_URL });
  await sql.connect();
  apps = new TestApps('tollgate-responses-passthrough-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      'api: { token: "api-token-unused-by-responses-passthrough" }',
      'ai:',
      '  retry_attempts: 0',
      '  default_provider: openai',
      '  model_aliases: { smart: [openai/gpt-5-test, anthropic/claude-haiku-4-5] }',
      'providers:',
      `  openai: { url: "${openai.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-5-test, timeout: 5 }`,
      `  anthropic: { url: "${anthropic.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-haiku-4-5, timeout: 5 }`,
      `  azure: { kind: azure_openai, url: "${azure.url}", api_key: "${AZURE_KEY}", chat_model: gpt-5-test, timeout: 5, azure: { deployments: { gpt-5-test: prod-5 } } }`,
      'governance:',
      `  admin_token: "${ADMIN_TOKEN}"`,
      `  ledger: { store: postgres, url: "${PG_URL}", table: ${LEDGER_TABLE}, flush_interval: 0.2 }`,
      '',
    ].join('\n'),
  ));
  keyA = (await createKey({ tenant: 't-pass-a', name: 'a', budget_tokens: 100_000, period: 'day' })).key;
  keyB = (await createKey({ tenant: 't-pass-b', name: 'b' })).key;
});

afterAll(async () => {
  await apps?.close();
  await sql?.query(`DROP TABLE IF EXISTS ${LEDGER_TABLE}, ${LEDGER_TABLE}_daily`).catch(() => undefined);
  await sql?.end();
  await Promise.all([openai?.close(), anthropic?.close(), azure?.close()]);
});

beforeEach(() => {
  openai.server.reset();
  openai.responsesSent.length = 0;
  openai.responseStreamsSent.length = 0;
});

describe('/openai/v1/responses to an OpenAI upstream', () => {
  it('the body arrives as written (only model, store and the budget bound set), the answer comes back as sent', async () => {
    const request = { ...codexTurn([{ role: 'user', content: 'Weather in Paris?' }]), max_output_tokens: 2048, metadata: { run: 'r1' }, temperature: 1 };
    const answer = await client().responses.create(request);

    const [sent] = upstreamBodies();
    expect(sent).toEqual({ ...request, model: 'gpt-5-test', store: false });
    const [upstream] = openai.responsesSent;
    // Echoed as the caller asked: the model as this surface names it, and the caller's own store setting.
    expect(answer).toEqual({ ...upstream, model: MODEL, store: false, previous_response_id: null, output_text: '' });
    expect(answer.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect((answer.output[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toEqual(expect.any(String));
  });

  it('a Codex-style loop: encrypted reasoning goes back untouched over two turns, streamed; a tampered one is the caller\'s 400', async () => {
    const first = codexTurn([{ role: 'user', content: 'Weather in Paris?' }]);
    const called = await client().responses.stream(first).finalResponse();
    const [reasoning, call] = called.output as [OpenAI.Responses.ResponseReasoningItem, OpenAI.Responses.ResponseFunctionToolCall];
    expect(reasoning).toMatchObject({ type: 'reasoning', encrypted_content: expect.any(String) });
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' });

    const second = codexTurn([...first.input, reasoning, call, { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }]);
    const answered = await client().responses.stream(second).finalResponse();
    expect(answered.output_text).toBe('tool said: sunny');
    const sent = upstreamBodies()[1];
    expect(sent).toEqual({ ...second, model: 'gpt-5-test', stream: true, max_output_tokens: expect.any(Number) });
    expect(sent.input[1]).toEqual(reasoning);

    const tampered = codexTurn([...first.input, { ...reasoning, encrypted_content: `x${reasoning.encrypted_content}` }, call, second.input.at(-1)!]);
    const error = await client().responses.create(tampered).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect((error as Error).message).not.toContain(UPSTREAM_MARKER);
    // The caller's own body was refused: no fallback to the alias's other target, no retry.
    expect(upstreamBodies()).toHaveLength(3);
  });

  it('a stream is the emulator\'s bytes, only the echo of the request changed', async () => {
    const { status, text } = await rawStream({ model: MODEL, input: 'Say hi', include: ['reasoning.encrypted_content'] });
    expect(status).toBe(200);
    expect(openai.responseStreamsSent).toHaveLength(1);
    expect(text).toBe(relayedStream(openai.responseStreamsSent[0], { model: MODEL, store: true, previous_response_id: null }));
    expect(text).toContain('event: response.output_text.delta\ndata: {"type":"response.output_text.delta"');
  });

  it('a failure after the first event ends in response.failed, numbered after the upstream\'s events, without the upstream text', async () => {
    openai.midStreamErrorNext();
    const { status, text, events } = await rawStream({ model: MODEL, input: 'This answer will break' });
    expect(status).toBe(200);
    expect(events.map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.failed']);
    expect(events.map((event) => event.sequence_number)).toEqual([0, 1, 2, 3]);
    expect(events[3].response).toMatchObject({ id: events[0].response.id, model: MODEL, status: 'failed', error: { code: expect.any(String) } });
    expect(text).not.toContain(UPSTREAM_MARKER);
  });

  it('the budget bounds max_output_tokens and the ledger records the upstream\'s own counts, plain and streamed', async () => {
    const { key, id } = await createKey({ tenant: 't-pass-ledger', name: 'ledger', budget_tokens: 100_000, period: 'day' });
    const request = { model: MODEL, input: 'Count me', store: false };
    const plain = await client(key).responses.create(request);
    await client(key).responses.stream(request).finalResponse();
    const [sent, streamed] = upstreamBodies();
    // Held to a token budget without a bound of its own, the call is sent one.
    expect(sent).toEqual({ ...request, model: 'gpt-5-test', max_output_tokens: expect.any(Number) });
    expect(streamed).toEqual({ ...sent, stream: true });
    expect(plain.usage).toMatchObject({ input_tokens: 7, output_tokens: 8, output_tokens_details: { reasoning_tokens: 5 } });

    let rows: Json[] = [];
    for (const deadline = Date.now() + 10_000; rows.length < 2 && Date.now() < deadline; await new Promise((wait) => setTimeout(wait, 200))) {
      rows = (await sql.query(`SELECT route, model, input_tokens, output_tokens, estimated FROM ${LEDGER_TABLE} WHERE key_id = $1 ORDER BY id`, [id]).catch(() => ({ rows: [] }))).rows;
    }
    expect(rows).toEqual([
      { route: '/openai/v1/responses', model: 'gpt-5-test', input_tokens: '7', output_tokens: '8', estimated: false },
      { route: '/openai/v1/responses', model: 'gpt-5-test', input_tokens: '7', output_tokens: '8', estimated: false },
    ]);
  });
});

describe('stored responses stay Tollgate\'s', () => {
  it('previous_response_id is expanded into input (store: false upstream), and the conversation moves to Anthropic', async () => {
    const called = await client().responses.create({ model: MODEL, input: 'Weather in Paris?', tools: [weather], include: ['reasoning.encrypted_content'] });
    expect(called).toMatchObject({ store: true });
    const [reasoning, call] = called.output as [OpenAI.Responses.ResponseReasoningItem, OpenAI.Responses.ResponseFunctionToolCall];
    // Stored as the upstream answered it, encrypted reasoning included.
    expect(await client().responses.retrieve(called.id)).toMatchObject({ id: called.id, output: [reasoning, call], store: true });

    const output = { type: 'function_call_output' as const, call_id: call.call_id, output: 'sunny' };
    const answered = await client().responses.create({ model: MODEL, previous_response_id: called.id, tools: [weather], input: [output] });
    expect(answered).toMatchObject({ output_text: 'tool said: sunny', previous_response_id: called.id, model: MODEL });
    const sent = upstreamBodies()[1];
    expect(sent).not.toHaveProperty('previous_response_id');
    expect(sent).toMatchObject({ store: false, model: 'gpt-5-test' });
    expect(sent.input).toEqual([expect.objectContaining({ role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] }), reasoning, call, output]);

    // The same stored conversation continues on another kind, which reads no reasoning.
    const moved = await client().responses.create({ model: 'anthropic/claude-haiku-4-5', previous_response_id: called.id, tools: [weather], input: [output] });
    expect(moved.output_text).toBe('Tool results: sunny');
  });

  it('a stored reasoning item without its encrypted content is left out of a continuation, which the upstream would refuse', async () => {
    const first = await client().responses.create({ model: MODEL, input: 'Hello' });
    expect(first.output[0]).toMatchObject({ type: 'reasoning' });
    expect(first.output[0]).not.toHaveProperty('encrypted_content');
    const next = await client().responses.create({ model: MODEL, previous_response_id: first.id, input: 'Again' });
    expect(next.output_text).toBe('echo: Again');
    expect(upstreamBodies()[1].input.map((item: Json) => item.type ?? item.role)).toEqual(['message', 'message', 'user']);
  });

  it('another tenant\'s id is still 404, and 400 as previous_response_id', async () => {
    const created = await client().responses.create({ model: MODEL, input: 'Mine' });
    await expect(client(keyB).responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client(keyB).responses.create({ model: MODEL, previous_response_id: created.id, input: 'more' })).rejects.toMatchObject({ status: 400, param: 'previous_response_id' });
    await expect(client(keyB).responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    expect(upstreamBodies()).toHaveLength(1);
  });
});

describe('other targets', () => {
  it('an upstream failure falls back to Anthropic through the domain request', async () => {
    openai.serverErrorNext(503);
    const answer = await client().responses.create({ model: 'smart', input: 'Hi there', include: ['reasoning.encrypted_content'] });
    expect(answer).toMatchObject({ model: 'anthropic/claude-haiku-4-5', output_text: 'Hello from Claude here', status: 'completed' });
    expect(upstreamBodies()).toHaveLength(1);
  });

  it('Azure\'s v1 API takes it as written too, the deployment in model', async () => {
    const request = { model: 'azure/gpt-5-test', input: 'Hi Azure', metadata: { run: 'az' } };
    const answer = await client().responses.create(request);
    expect(answer).toMatchObject({ model: 'azure/gpt-5-test', output_text: 'echo: Hi Azure' });
    const sent = azure.server.requestsTo('/openai/v1/responses').at(-1)!;
    expect(sent.body).toEqual({ ...request, model: 'prod-5', store: false, max_output_tokens: expect.any(Number) });
    expect(sent.headers['api-key']).toBe(AZURE_KEY);
  });
});
