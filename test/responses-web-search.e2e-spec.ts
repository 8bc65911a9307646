/**
 * Codex's `web_search` tool on the Responses surface (docs/decisions.md B23), through the official `openai` client:
 * to a model that is not OpenAI's, Tollgate searches through its SearXNG tool (the emulator) between the model's
 * turns and answers `web_search_call` items and events as OpenAI does; to an OpenAI model the tool goes as written;
 * without a search tool configured it is refused naming the tool.
 */
import OpenAI from 'openai';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { SearxngEmulator } from './emulators/searxng-emulator';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-responses-web-search';
const UPSTREAM_KEY = 'sk-emulator-responses-web-search';
const CLAUDE = 'anthropic/claude-haiku-4-5';

let apps: TestApps;
let anthropic: AnthropicEmulator;
let openaiUpstream: OpenAiEmulator;
let searxng: SearxngEmulator;
/** Tollgate with SearXNG configured, and one without any search tool. */
let withSearch: string;
let withoutSearch: string;

beforeAll(async () => {
  [anthropic, openaiUpstream, searxng] = await Promise.all([
    startAnthropicEmulator({ reply: 'Hello from Claude here', toolInputs: { web_search: { query: 'paris weather' } } }),
    OpenAiEmulator.start({ apiKey: UPSTREAM_KEY, chatModels: ['gpt-test'] }),
    SearxngEmulator.start(),
  ]);
  apps = new TestApps('tollgate-responses-web-search-', { API_TOKEN: TOKEN });
  const yaml = [
    'version: 1',
    'ai: { retry_attempts: 0, enable_fallback: false, default_provider: anthropic }',
    'providers:',
    `  anthropic: { url: "${anthropic.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-haiku-4-5, timeout: 10 }`,
    `  openai: { url: "${openaiUpstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 10 }`,
    '',
  ].join('\n');
  [{ origin: withSearch }, { origin: withoutSearch }] = await Promise.all([
    apps.listen(yaml, { SEARXNG_URL: searxng.url, SEARXNG_ALLOW_PRIVATE_NETWORK: 'true' }),
    apps.listen(yaml),
  ]);
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([anthropic?.close(), openaiUpstream?.close(), searxng?.close()]);
});

beforeEach(() => {
  anthropic.server.reset();
  openaiUpstream.server.reset();
  searxng.reset();
});

const client = (origin = withSearch) => new OpenAI({ apiKey: TOKEN, baseURL: `${origin}/openai/v1`, maxRetries: 0 });

/** The Messages bodies Tollgate sent the Anthropic emulator, in order. */
const anthropicBodies = () => anthropic.server.requestsTo('/v1/messages').map((request) => request.body as { tools?: Array<Record<string, unknown>>; messages: Array<{ role: string; content: unknown }> });

describe('web_search to a model that is not OpenAI, search configured', () => {
  it('responses.create: the search is a web_search_call item (query, sources when included), then the answer that read its results', async () => {
    const response = await client().responses.create({ model: CLAUDE, input: 'Weather in Paris?', tools: [{ type: 'web_search' }], include: ['web_search_call.action.sources'] });
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['message', 'web_search_call', 'message']);
    const search = response.output[1] as OpenAI.Responses.ResponseFunctionWebSearch;
    expect(search).toEqual({
      type: 'web_search_call',
      id: expect.stringMatching(/^ws_[0-9a-f]{48}$/),
      status: 'completed',
      action: { type: 'search', query: 'paris weather', sources: expect.arrayContaining([{ type: 'url', url: 'https://example.org/paris%20weather/1' }]) },
    });
    expect(searxng.server.requestsTo('/search').map((request) => request.query.get('q'))).toEqual(['paris weather']);
    // The model was offered a function, and read the results as its output in the next turn.
    const [first, second] = anthropicBodies();
    expect(first.tools).toEqual([expect.objectContaining({ name: 'web_search', input_schema: expect.objectContaining({ required: ['query'] }) })]);
    expect(JSON.stringify(second.messages.at(-1))).toContain('https://example.org/paris%20weather/1');
    expect(response.output_text).toContain('Tool results: {"query":"paris weather","results":[{"title":"Result 1 for paris weather"');
    // Both turns' usage: the answer counts what the two model calls cost.
    expect(response.usage!.input_tokens).toBeGreaterThan(0);
    expect(response.usage!.output_tokens).toBeGreaterThan(1);
  });

  it('without include, the action names the query only', async () => {
    const response = await client().responses.create({ model: CLAUDE, input: 'Weather in Paris?', tools: [{ type: 'web_search_preview' }] });
    expect(response.output.find((item) => item.type === 'web_search_call')).toMatchObject({ status: 'completed', action: { type: 'search', query: 'paris weather' } });
    expect((response.output.find((item) => item.type === 'web_search_call') as OpenAI.Responses.ResponseFunctionWebSearch).action).not.toHaveProperty('sources');
  });

  it('responses.stream: the web_search_call events in OpenAI order, the message after them, and Codex-style replay of the output', async () => {
    const events: Array<{ type: string; output_index?: number; item?: { type: string; status?: string } }> = [];
    const stream = client().responses.stream({ model: CLAUDE, input: 'Weather in Paris?', tools: [{ type: 'web_search' }], store: false });
    stream.on('event', (event) => void events.push(event as (typeof events)[number]));
    const final = await stream.finalResponse();
    const searchIndex = final.output.findIndex((item) => item.type === 'web_search_call');
    const around = events.filter((event) => event.output_index === searchIndex).map((event) => (event.item ? `${event.type}:${event.item.type}:${event.item.status}` : event.type));
    expect(around).toEqual([
      'response.output_item.added:web_search_call:in_progress',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done:web_search_call:completed',
    ]);
    const types = events.map((event) => event.type);
    expect(types.indexOf('response.web_search_call.completed')).toBeLessThan(types.lastIndexOf('response.output_text.delta'));
    expect(types.at(-1)).toBe('response.completed');
    expect(final.output_text).toContain('"query":"paris weather"');
    // Codex sends the output back as input with store false: the web_search_call item is taken and the model reads on.
    const next = await client().responses.create({
      model: CLAUDE,
      store: false,
      tools: [{ type: 'web_search' }],
      input: [{ role: 'user', content: 'Weather in Paris?' }, ...(final.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'And tomorrow?' }],
    });
    expect(next.status).toBe('completed');
    expect(searxng.server.requestsTo('/search')).toHaveLength(2);
  });

  it("a turn that searches beside the caller's function has its searches run and is asked again; the function call comes when the model makes it", async () => {
    const weather = { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false };
    const response = await client().responses.create({ model: CLAUDE, input: 'Weather in Paris?', tools: [{ type: 'web_search' }, weather] });
    // The emulator calls both tools in its first turn and answers the search's result with text.
    expect(response.output.map((item) => item.type)).toEqual(['message', 'web_search_call', 'message']);
    const [, second] = anthropicBodies();
    const assistant = second.messages.at(-2)!.content as Array<{ type: string; name?: string }>;
    expect(assistant.filter((block) => block.type === 'tool_use').map((block) => block.name)).toEqual(['web_search']);
  });

  it('tool_choice {type: "web_search"} forces the search in the first turn only; the model then answers', async () => {
    const response = await client().responses.create({ model: CLAUDE, input: 'Weather in Paris?', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search_preview' } });
    expect(response.output.map((item) => item.type)).toEqual(['web_search_call', 'message']);
    const [first, second] = anthropicBodies() as Array<{ tool_choice?: unknown }>;
    expect(first.tool_choice).toEqual({ type: 'tool', name: 'web_search' });
    expect(second.tool_choice).toEqual({ type: 'auto' });
  });

  it('a search that fails is a failed web_search_call; the model is told its category, never the tool text', async () => {
    searxng.rateLimitNext();
    const response = await client().responses.create({ model: CLAUDE, input: 'Weather in Paris?', tools: [{ type: 'web_search' }] });
    expect(response.output[1]).toMatchObject({ type: 'web_search_call', status: 'failed', action: { type: 'search', query: 'paris weather' } });
    const [, second] = anthropicBodies();
    const result = JSON.stringify(second.messages.at(-1));
    expect(result).toContain('rate_limited');
    expect(result).not.toContain('Too Many Requests');
  });
});

describe('web_search to an OpenAI model, and without search configured', () => {
  it('goes to OpenAI as written, searching nothing here', async () => {
    const response = await client().responses.create({ model: 'openai/gpt-test', input: 'Weather in Paris?', tools: [{ type: 'web_search', search_context_size: 'low' }] });
    expect(response.status).toBe('completed');
    const [sent] = openaiUpstream.server.requestsTo('/v1/responses').map((request) => request.body as { tools: unknown[] });
    expect(sent.tools).toEqual([{ type: 'web_search', search_context_size: 'low' }]);
    expect(searxng.server.requestsTo('/search')).toHaveLength(0);
  });

  it('with no search tool, a model that is not OpenAI refuses the tool by name and says what to configure; OpenAI still takes it', async () => {
    const refused = await client(withoutSearch)
      .responses.create({ model: CLAUDE, input: 'Weather?', tools: [{ type: 'function', name: 'f', parameters: null, strict: false }, { type: 'web_search' }] })
      .then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ param: 'tools[1].type', code: 'unsupported_value' });
    expect((refused as Error).message).toContain('SEARXNG_URL');
    expect(anthropicBodies()).toHaveLength(0);
    const taken = await client(withoutSearch).responses.create({ model: 'openai/gpt-test', input: 'Weather?', tools: [{ type: 'web_search' }] });
    expect(taken.status).toBe('completed');
  });
});
