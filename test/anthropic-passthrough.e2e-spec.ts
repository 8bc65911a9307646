/**
 * Anthropic to Anthropic loses nothing (docs/decisions.md B16): the official `@anthropic-ai/sdk` through
 * Tollgate's `/anthropic/v1` to the Anthropic emulator, which signs its thinking blocks, refuses a history whose
 * signatures changed or whose tool turn lost its thinking block, caches prompt prefixes at each `cache_control`
 * and refuses `context_management` without its beta header. A thinking + tool loop arrives upstream as sent, the
 * stream comes back event for event, and governance still settles and records the call from the upstream's usage,
 * cache writes priced by tier.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Client } from 'pg';
import {
  ANTHROPIC_BODY_MARKER,
  ANTHROPIC_EMULATOR_KEY,
  type AnthropicEmulator,
  CONTEXT_MANAGEMENT_BETA,
  MID_CONVERSATION_SYSTEM_BETA,
  startAnthropicEmulator,
  thinkingSignature,
} from './emulators/anthropic-emulator';
import { TestApps } from './support/test-apps';

const ADMIN_TOKEN = 'admin-token-for-anthropic-passthrough';
const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const LEDGER_TABLE = `anthropic_passthrough_ledger_${process.pid}`;
const BETAS = `interleaved-thinking-2025-05-14,${CONTEXT_MANAGEMENT_BETA}`;
/** claude-sonnet-4-5 in config/pricing.default.json, USD per million tokens (micro-dollars per token). */
const SONNET = { input: 3, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 };

type Json = Record<string, any>;

let anthropic: AnthropicEmulator;
let apps: TestApps;
let origin: string;
let sql: Client;
let key: string;
let keyId: string;

const weatherTool = {
  name: 'get_weather',
  description: 'Weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  cache_control: { type: 'ephemeral', ttl: '1h' },
  defer_loading: false,
} as const;

/** What Claude Code sends with thinking on: cached system and tools, a cache breakpoint on the turn, betas in the body's features. */
const request = () => ({
  model: 'anthropic/claude-sonnet-4-5',
  max_tokens: 4096,
  thinking: { type: 'enabled', budget_tokens: 2048 },
  system: [{ type: 'text', text: `You are a weather agent. ${'Answer with care. '.repeat(40)}`, cache_control: { type: 'ephemeral' } }],
  tools: [weatherTool],
  context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
  output_config: { effort: 'medium' },
  metadata: { user_id: 'user-7' },
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?', cache_control: { type: 'ephemeral' } }] }],
});

/** The headers the SDK sent Tollgate on its last request. */
let clientHeaders: Headers;
const client = () =>
  new Anthropic({
    apiKey: key,
    baseURL: `${origin}/anthropic`,
    maxRetries: 0,
    defaultHeaders: { 'anthropic-beta': BETAS },
    fetch: (url, init) => {
      clientHeaders = new Headers(init?.headers);
      return fetch(url, init);
    },
  });
const upstreamRequests = () => anthropic.server.requestsTo('/v1/messages');

/** The SSE events of a stream's text, parsed. */
function events(text: string): Json[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => JSON.parse(frame.split('\n').find((line) => line.startsWith('data: '))!.slice(6)) as Json);
}

beforeAll(async () => {
  anthropic = await startAnthropicEmulator({ toolInputs: { get_weather: { city: 'Paris' } } });
  sql = new Client({ connectionString: PG_URL });
  await sql.connect();
  apps = new TestApps('tollgate-anthropic-passthrough-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: anthropic }',
      'providers:',
      `  anthropic: { url: "${anthropic.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-sonnet-4-5, timeout: 5 }`,
      'governance:',
      `  admin_token: "${ADMIN_TOKEN}"`,
      `  ledger: { store: postgres, url: "${PG_URL}", table: ${LEDGER_TABLE} }`,
      '',
    ].join('\n'),
  ));
  const created = await fetch(`${origin}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 't-passthrough', name: 'agent', budget_usd: 5, period: 'day' }),
  });
  expect(created.status).toBe(201);
  ({ key, id: keyId } = (await created.json()) as { key: string; id: string });
});

afterAll(async () => {
  await apps?.close();
  await sql?.query(`DROP TABLE IF EXISTS ${LEDGER_TABLE}`).catch(() => undefined);
  await sql?.end();
  await anthropic?.close();
});

beforeEach(() => {
  anthropic.server.reset();
  anthropic.clearCache();
  anthropic.streamsSent.length = 0;
  anthropic.options.redactThinking = undefined;
});

describe('/anthropic/v1/messages to an Anthropic upstream', () => {
  it('a thinking + tool loop: signatures, cache_control, betas and every body field arrive as sent; the stream comes back event for event', async () => {
    const first = request();
    const stream = client().messages.stream(first as unknown as Anthropic.MessageCreateParamsStreaming);
    const received: Json[] = [];
    // Copied as they arrive: the SDK builds its message snapshot in message_start's own object.
    stream.on('streamEvent', (event) => received.push(structuredClone(event) as unknown as Json));
    const answer = await stream.finalMessage();

    // Upstream: the caller's body with only the model routed and stream set, and the caller's headers.
    const sent = upstreamRequests()[0];
    expect(sent.body).toEqual({ ...first, model: 'claude-sonnet-4-5', stream: true });
    expect(sent.headers['anthropic-beta']).toBe(BETAS);
    // The SDK's own version date, not the one the adapter pins for requests it writes itself.
    expect(sent.headers['anthropic-version']).toBe(clientHeaders.get('anthropic-version'));
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_EMULATOR_KEY);

    // Downstream: the emulator's events, each as it sent them (message_start names the model as asked).
    const upstreamEvents = events(anthropic.streamsSent[0]);
    upstreamEvents[0].message.model = 'anthropic/claude-sonnet-4-5';
    expect(received).toEqual(upstreamEvents);
    const deltaTypes = received.filter((event) => event.type === 'content_block_delta').map((event) => event.delta.type);
    expect(deltaTypes).toEqual(expect.arrayContaining(['thinking_delta', 'signature_delta', 'input_json_delta']));
    const [thinking] = answer.content as Json[];
    const toolUse = (answer.content as Json[]).find((block) => block.type === 'tool_use')!;
    expect(thinking).toEqual({ type: 'thinking', thinking: expect.stringContaining('Reasoning'), signature: thinkingSignature(thinking.thinking) });
    expect(toolUse).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    // The first call wrote the tools for an hour, the system prompt and the turn for five minutes.
    expect(answer.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation: { ephemeral_1h_input_tokens: expect.any(Number), ephemeral_5m_input_tokens: expect.any(Number) } });
    expect(answer.usage.cache_creation!.ephemeral_1h_input_tokens).toBeGreaterThan(0);
    expect(answer.usage.cache_creation!.ephemeral_5m_input_tokens).toBeGreaterThan(0);

    // The tool turn sends the thinking block back; the emulator refuses it changed or missing.
    const second = {
      ...request(),
      messages: [
        ...first.messages,
        { role: 'assistant', content: answer.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'sunny' }] },
      ],
    };
    const final = await client().messages.create(second as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(final.content.at(-1)).toEqual({ type: 'text', text: 'Tool results: sunny' });
    expect(final.model).toBe('anthropic/claude-sonnet-4-5');
    const loop = upstreamRequests()[1];
    expect((loop.body as Json).messages[1].content[0]).toEqual(thinking);
    expect(loop.rawBody).toContain(`"signature":"${thinking.signature}"`);
    // The cached prefix (tools, system, first turn) is read back.
    expect(final.usage.cache_read_input_tokens).toBeGreaterThan(0);

    // Governance settled both calls from the upstream's usage: cache reads and tiered writes priced as Anthropic bills them.
    const billed = [answer.usage, final.usage].map((usage) =>
      Math.round(
        usage.input_tokens * SONNET.input +
          usage.cache_read_input_tokens! * SONNET.cacheRead +
          usage.cache_creation!.ephemeral_5m_input_tokens * SONNET.cacheWrite5m +
          usage.cache_creation!.ephemeral_1h_input_tokens * SONNET.cacheWrite1h +
          usage.output_tokens * SONNET.output,
      ),
    );
    const rows = await ledgerRows(2);
    expect(rows).toEqual([
      {
        route: '/anthropic/v1/messages',
        input_tokens: String(answer.usage.input_tokens + answer.usage.cache_creation_input_tokens!),
        cached_tokens: '0',
        output_tokens: String(answer.usage.output_tokens),
        cost_micros: String(billed[0]),
        estimated: false,
      },
      {
        route: '/anthropic/v1/messages',
        input_tokens: String(final.usage.input_tokens + final.usage.cache_creation_input_tokens! + final.usage.cache_read_input_tokens!),
        cached_tokens: String(final.usage.cache_read_input_tokens),
        output_tokens: String(final.usage.output_tokens),
        cost_micros: String(billed[1]),
        estimated: false,
      },
    ]);
  });

  it('the streamed answer is the upstream stream byte for byte, but for the model message_start names', async () => {
    const response = await fetch(`${origin}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': BETAS },
      body: JSON.stringify({ ...request(), stream: true }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toBe(anthropic.streamsSent[0].replace('"model":"claude-sonnet-4-5"', '"model":"anthropic/claude-sonnet-4-5"'));
  });

  it('redacted thinking goes back untouched', async () => {
    anthropic.options.redactThinking = true;
    const first = request();
    const answer = await client().messages.create(first as unknown as Anthropic.MessageCreateParamsNonStreaming);
    const [redacted] = answer.content as Json[];
    const toolUse = (answer.content as Json[]).find((block) => block.type === 'tool_use')!;
    expect(redacted).toEqual({ type: 'redacted_thinking', data: expect.any(String) });
    const final = await client().messages.create({
      ...first,
      messages: [...first.messages, { role: 'assistant', content: answer.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'rain' }] }],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(final.content.at(-1)).toEqual({ type: 'text', text: 'Tool results: rain' });
    expect((upstreamRequests()[1].body as Json).messages[1].content[0]).toEqual(redacted);
  });

  it('a system message stays where it stands under the beta that allows it, and is moved into system without it', async () => {
    const body = {
      model: 'anthropic/claude-sonnet-4-5',
      max_tokens: 64,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Hello' },
        { role: 'system', content: 'Answer in English.' },
      ],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const inPlace = new Anthropic({ apiKey: key, baseURL: `${origin}/anthropic`, maxRetries: 0, defaultHeaders: { 'anthropic-beta': MID_CONVERSATION_SYSTEM_BETA } });
    await inPlace.messages.create(body);
    await client().messages.create(body);
    const [kept, moved] = upstreamRequests().map((sent) => sent.body as Json);
    expect(kept).toMatchObject({ system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }, { role: 'system', content: 'Answer in English.' }] });
    expect(moved).toMatchObject({
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Answer in English.' },
      ],
      messages: [{ role: 'user', content: 'Hello' }],
    });
  });

  it('the emulator checks what the gateway must keep: a changed signature and a beta field without its header are refused', async () => {
    const tampered = {
      ...request(),
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Changed reasoning.', signature: thinkingSignature('Original reasoning.') }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
    };
    const refused = await client().messages.create(tampered as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    // Named by status and type; the upstream's text stays upstream.
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('400 invalid_request_error') } });
    expect(JSON.stringify((refused as InstanceType<typeof Anthropic.BadRequestError>).error)).not.toContain(ANTHROPIC_BODY_MARKER);
    const noBeta = new Anthropic({ apiKey: key, baseURL: `${origin}/anthropic`, maxRetries: 0 });
    const withoutHeader = await noBeta.messages.create(request() as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(withoutHeader).toBeInstanceOf(Anthropic.BadRequestError);
    expect(upstreamRequests().map((sent) => sent.headers['anthropic-beta'])).toEqual([BETAS, undefined]);
  });
});

/** The key's ledger rows, oldest first, once `count` of them are written (the ledger writes in batches). */
async function ledgerRows(count: number): Promise<Json[]> {
  const deadline = Date.now() + 10_000;
  let rows: Json[] = [];
  while (Date.now() < deadline && rows.length < count) {
    rows = (
      await sql
        .query(`SELECT route, input_tokens, cached_tokens, output_tokens, cost_micros, estimated FROM ${LEDGER_TABLE} WHERE key_id = $1 ORDER BY id`, [keyId])
        .catch(() => ({ rows: [] }))
    ).rows;
    if (rows.length < count) await new Promise((wait) => setTimeout(wait, 200));
  }
  return rows;
}
