/**
 * What only Anthropic answers reaches an Anthropic upstream as written, and no other (docs/decisions.md B16): the
 * official `@anthropic-ai/sdk` through Tollgate's `/anthropic/v1` sends a web search server tool and a PDF document
 * to the Anthropic emulator untouched and gets its server-tool blocks back as sent; the same request to a model
 * that routes to OpenAI (an alias) is refused naming the field, and fallback does not move it there. count_tokens
 * is the upstream's own count for an Anthropic model and an estimate otherwise. A key budget that lowers
 * max_tokens lowers the thinking budget with it, or refuses the call when thinking no longer fits.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, emulatedTokenCount, startAnthropicEmulator, WEB_SEARCH_RESULT } from './emulators/anthropic-emulator';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { TestApps } from './support/test-apps';

const ADMIN_TOKEN = 'admin-token-for-anthropic-native-features';
const OPENAI_KEY = 'sk-emulator-anthropic-native-features';

type Json = Record<string, any>;

let anthropic: AnthropicEmulator;
let openai: OpenAiEmulator;
let apps: TestApps;
let origin: string;
let key: string;

const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['example.com'], user_location: { type: 'approximate', city: 'Paris' } };
/** The smallest PDF: what matters is that it arrives byte for byte. */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF').toString('base64');

const searchRequest = (model: string) => ({
  model,
  max_tokens: 512,
  tools: [webSearch],
  messages: [{ role: 'user', content: 'Weather in Paris?' }],
});
const pdfRequest = (model: string) => ({
  model,
  max_tokens: 512,
  messages: [
    {
      role: 'user',
      content: [
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Report', citations: { enabled: true }, cache_control: { type: 'ephemeral' } },
        { type: 'document', source: { type: 'url', url: 'https://example.com/paper.pdf' } },
        { type: 'text', text: 'Summarise both.' },
      ],
    },
  ],
});

const client = (apiKey = key) => new Anthropic({ apiKey, baseURL: `${origin}/anthropic`, maxRetries: 0 });
const upstreamRequests = () => anthropic.server.requestsTo('/v1/messages');

async function createKey(body: Json): Promise<string> {
  const created = await fetch(`${origin}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 't-native', ...body }),
  });
  expect(created.status).toBe(201);
  return ((await created.json()) as { key: string }).key;
}

beforeAll(async () => {
  anthropic = await startAnthropicEmulator();
  openai = await OpenAiEmulator.start({ apiKey: OPENAI_KEY });
  apps = new TestApps('tollgate-anthropic-native-features-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      'ai:',
      '  retry_attempts: 0',
      '  enable_fallback: true',
      '  default_provider: anthropic',
      '  model_aliases: { gpt-alias: [openai/gpt-test], claude-then-gpt: [anthropic/claude-sonnet-4-5, openai/gpt-test] }',
      'providers:',
      `  anthropic: { url: "${anthropic.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-sonnet-4-5, timeout: 5 }`,
      `  openai: { url: "${openai.url}", api_key: "${OPENAI_KEY}", chat_model: gpt-test, timeout: 5 }`,
      'governance:',
      `  admin_token: "${ADMIN_TOKEN}"`,
      '',
    ].join('\n'),
  ));
  key = await createKey({ name: 'agent' });
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([anthropic?.close(), openai?.close()]);
});

beforeEach(() => {
  anthropic.server.reset();
  openai.server.reset();
  anthropic.streamsSent.length = 0;
});

describe('server tools and documents', () => {
  it('a web search server tool reaches Anthropic as written; its server-tool blocks and usage come back as sent', async () => {
    const answer = await client().messages.create(searchRequest('anthropic/claude-sonnet-4-5') as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(upstreamRequests()[0].body).toEqual({ ...searchRequest('claude-sonnet-4-5') });
    const [call, result, text] = answer.content as Json[];
    expect(call).toMatchObject({ type: 'server_tool_use', name: 'web_search', input: { query: 'Weather in Paris?' } });
    expect(result).toMatchObject({ type: 'web_search_tool_result', tool_use_id: call.id, content: [{ type: 'web_search_result', ...WEB_SEARCH_RESULT }] });
    expect(text).toMatchObject({ type: 'text', citations: [{ type: 'web_search_result_location', ...WEB_SEARCH_RESULT }] });
    expect(answer.usage.server_tool_use).toEqual({ web_search_requests: 1 });

    // The answer goes back in the next turn, server-tool blocks and all.
    const next = await client().messages.create({
      ...searchRequest('anthropic/claude-sonnet-4-5'),
      messages: [...searchRequest('').messages, { role: 'assistant', content: answer.content }, { role: 'user', content: 'And tomorrow?' }],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(next.content[0].type).toBe('server_tool_use');
    expect((upstreamRequests()[1].body as Json).messages[1].content).toEqual(JSON.parse(JSON.stringify(answer.content)));
  });

  it('streamed: the server-tool events come back event for event', async () => {
    const stream = client().messages.stream(searchRequest('anthropic/claude-sonnet-4-5') as unknown as Anthropic.MessageCreateParamsStreaming);
    const answer = await stream.finalMessage();
    expect((answer.content as Json[]).map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    expect((answer.content[2] as Json).citations).toHaveLength(1);
    expect(anthropic.streamsSent[0]).toContain('"type":"citations_delta"');
  });

  it('PDF documents (base64 and URL) with citations and cache_control reach Anthropic byte for byte', async () => {
    const answer = await client().messages.create(pdfRequest('anthropic/claude-sonnet-4-5') as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(upstreamRequests()[0].body).toEqual(pdfRequest('claude-sonnet-4-5'));
    expect(upstreamRequests()[0].rawBody).toContain(PDF);
    expect((answer.content[0] as Json).text).toContain('documents read: 2');
  });

  it('the same requests to a model that routes to OpenAI are refused naming the field or the feature; nothing goes upstream', async () => {
    const search = await client().messages.create(searchRequest('gpt-alias') as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(search).toBeInstanceOf(Anthropic.BadRequestError);
    expect((search as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/^tools\.0\.type: server tool 'web_search_20250305': only an Anthropic model takes it; model gpt-test of provider openai \(openai\) does not/) },
    });
    const pdf = await client().messages.create(pdfRequest('openai/gpt-test') as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(pdf).toBeInstanceOf(Anthropic.BadRequestError);
    // A base64 PDF is a domain document (B20): refused as document input by a kind that reads none.
    expect((pdf as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('openai: openai model gpt-test does not support document input');
    const mcp = await client()
      .messages.create({ ...searchRequest('gpt-alias'), tools: undefined, mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect((mcp as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('mcp_servers: only an Anthropic model takes it');
    expect(openai.server.requestsTo('/v1/chat/completions')).toHaveLength(0);
    expect(upstreamRequests()).toHaveLength(0);
  });

  it('fallback does not move a server-tool request to OpenAI: the Anthropic failure is the answer; a plain request does fall back', async () => {
    anthropic.server.failNext(529);
    const refused = await client().messages.create(searchRequest('claude-then-gpt') as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.APIError);
    // The upstream's overload, as Anthropic reports one (not the 400 of a refused field).
    expect(refused).toMatchObject({ status: 529, error: { error: { type: 'overloaded_error' } } });
    expect(openai.server.requestsTo('/v1/chat/completions')).toHaveLength(0);

    anthropic.server.failNext(529);
    const plain = await client().messages.create({ model: 'claude-then-gpt', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] });
    expect(plain.content[0].type).toBe('text');
    expect(openai.server.requestsTo('/v1/chat/completions')).toHaveLength(1);
  });
});

describe('count_tokens', () => {
  it("an Anthropic model's count is the upstream's own, the caller's body and betas sent with the routed model", async () => {
    const body = { ...pdfRequest('anthropic/claude-sonnet-4-5'), max_tokens: undefined, tools: [webSearch], system: 'Be brief.' };
    const betaClient = new Anthropic({ apiKey: key, baseURL: `${origin}/anthropic`, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'pdfs-2024-09-25' } });
    const counted = await betaClient.messages.countTokens(body as unknown as Anthropic.MessageCountTokensParams);
    const [sent] = anthropic.server.requestsTo('/v1/messages/count_tokens');
    expect(sent.body).toEqual(JSON.parse(JSON.stringify({ ...body, model: 'claude-sonnet-4-5' })));
    expect(sent.headers['anthropic-beta']).toBe('pdfs-2024-09-25');
    expect(counted).toEqual({ input_tokens: emulatedTokenCount(sent.body as Json) });
  });

  it("another kind's count is the gateway's estimate; no upstream is asked", async () => {
    const counted = await client().messages.countTokens({ model: 'gpt-alias', messages: [{ role: 'user', content: 'x'.repeat(400) }] });
    expect(counted.input_tokens).toBeGreaterThanOrEqual(100);
    expect(counted.input_tokens).toBeLessThan(110);
    expect(anthropic.server.requestsTo('/v1/messages/count_tokens')).toHaveLength(0);
  });

  it("the upstream's refusal of the body is the caller's 400, its text kept upstream", async () => {
    const refused = await client()
      .messages.countTokens({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 'forged' }] }] } as unknown as Anthropic.MessageCountTokensParams)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('400 invalid_request_error');
  });
});

describe('thinking under a token budget', () => {
  const thinkingRequest = {
    model: 'anthropic/claude-sonnet-4-5',
    max_tokens: 8000,
    thinking: { type: 'enabled', budget_tokens: 6000 },
    messages: [{ role: 'user', content: 'Think about Paris.' }],
  } as unknown as Anthropic.MessageCreateParamsNonStreaming;

  it('a budget that lowers max_tokens lowers budget_tokens too, keeping its share and the API minimum', async () => {
    const bounded = await createKey({ name: 'thinker', budget_tokens: 3000, period: 'day' });
    const { data: answer, response } = await client(bounded).messages.create(thinkingRequest).withResponse();
    const granted = Number(response.headers.get('x-budget-max-tokens'));
    expect(granted).toBeGreaterThan(1024);
    expect(granted).toBeLessThan(3000);
    const sent = upstreamRequests()[0].body as Json;
    expect(sent.max_tokens).toBe(granted);
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: Math.floor((6000 * granted) / 8000) });
    expect(answer.content[0].type).toBe('thinking');
  });

  it('a budget too small for thinking refuses the call as a spent budget, final, and sends nothing', async () => {
    const small = await createKey({ name: 'small-thinker', budget_tokens: 1000, period: 'day' });
    const refused = await client(small).messages.create(thinkingRequest).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    const error = refused as InstanceType<typeof Anthropic.RateLimitError>;
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(upstreamRequests()).toHaveLength(0);
    // Without thinking the same key is sent what its budget covers.
    const plain = await client(small).messages.create({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 8000, messages: [{ role: 'user', content: 'Hello' }] });
    expect(plain.content[0].type).toBe('text');
  });
});
