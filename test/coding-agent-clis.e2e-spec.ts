/**
 * The coding-agent CLIs through Tollgate, replayed from what they sent: the request bodies Codex CLI 0.171.0
 * and Gemini CLI 0.61.0 sent in a tool turn (Codex's also with its sub-agent namespace and a goal) (recorded in test/fixtures/clients/, run as docs/clients.md says)
 * go to a server configured as a real deployment is, with the AuthModule (JWT) next to the API token, and
 * are answered by the emulators. Claude Code 2.1.197's requests on an Anthropic model (the pass-through path of
 * decision B16), recorded the same way, are replayed to the Anthropic emulator.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { ANTHROPIC_EMULATOR_KEY, type AnthropicEmulator, startAnthropicEmulator } from './emulators/anthropic-emulator';
import { GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-coding-agent-clis';
const JWT_SECRET = 'coding-agent-clis-jwt-secret-of-at-least-32-bytes';
const UPSTREAM_KEY = 'sk-emulator-coding-agent-clis';

type Json = Record<string, any>;

interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Json;
}

function recorded(name: string): RecordedRequest {
  return JSON.parse(readFileSync(join(__dirname, 'fixtures', 'clients', name), 'utf8')) as RecordedRequest;
}

let apps: TestApps;
let gemini: GeminiEmulator;
let openai: OpenAiEmulator;
let anthropic: AnthropicEmulator;
let origin: string;

beforeAll(async () => {
  [gemini, openai, anthropic] = await Promise.all([
    startGeminiEmulator({ reply: 'The secret word is pelican.' }),
    OpenAiEmulator.start({ apiKey: UPSTREAM_KEY }),
    startAnthropicEmulator({ reply: 'Hello from Claude here' }),
  ]);
  apps = new TestApps('tollgate-coding-agent-clis-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      `auth: { jwt_secret: "${JWT_SECRET}" }`,
      `api: { token: "${TOKEN}" }`,
      // Gemini CLI's own model names, as docs/clients.md aliases them.
      'ai: { retry_attempts: 0, enable_fallback: false, default_provider: gemini, model_aliases: { gemini-3.5-flash-lite: [anthropic/claude-haiku-4-5] } }',
      'providers:',
      `  gemini: { url: "${gemini.url}", api_key: "${GEMINI_EMULATOR_KEY}", chat_model: gemini-2.5-flash, timeout: 5 }`,
      `  openai: { url: "${openai.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 5 }`,
      `  anthropic: { url: "${anthropic.url}", api_key: "${ANTHROPIC_EMULATOR_KEY}", chat_model: claude-haiku-4-5, timeout: 5 }`,
      '',
    ].join('\n'),
  ));
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([gemini?.close(), openai?.close(), anthropic?.close()]);
});

beforeEach(() => {
  gemini.server.reset();
  gemini.options.functionCalls = undefined;
});

/** Sends a recorded request as the CLI sent it, with the key in the header the CLI puts it in. */
async function replay(request: RecordedRequest, keyHeader: Record<string, string>): Promise<Response> {
  return fetch(`${origin}${request.path}`, {
    method: request.method,
    headers: { ...request.headers, ...keyHeader },
    body: JSON.stringify(request.body),
  });
}

/** The `data:` payloads of an SSE body, parsed. */
function sseData(text: string): Json[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Json);
}

describe('Codex CLI 0.171.0 on /openai/v1/responses', () => {
  const codexKey = { authorization: `Bearer ${TOKEN}` };

  it('its first request of a turn (tools, client_metadata, prompt_cache_key, reasoning.summary, include) streams an answer', async () => {
    gemini.options.functionCalls = [{ name: 'exec_command', args: { cmd: 'cat notes.txt' } }];
    const request = recorded('codex-0.171.0-tool-turn-1.json');
    expect(request.body).toMatchObject({ client_metadata: expect.any(Object), prompt_cache_key: expect.any(String), reasoning: { summary: 'auto' }, include: ['reasoning.encrypted_content'], stream: true });

    const response = await replay(request, codexKey);
    expect(response.status).toBe(200);
    const events = sseData(await response.text());
    expect(events.map((event) => event.type)).toContain('response.completed');
    const call = events.find((event) => event.type === 'response.output_item.done')?.item;
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd: 'cat notes.txt' }) });

    const sent = gemini.server.requests[0].body as Json;
    expect(sent.tools[0].functionDeclarations.map((declaration: Json) => declaration.name)).toEqual(request.body.tools.map((tool: Json) => tool.name));
    expect(JSON.stringify(sent)).not.toContain('x-codex-installation-id');
  });

  it('its second request (function_call and function_call_output items) carries the command output to the model', async () => {
    const response = await replay(recorded('codex-0.171.0-tool-turn-2.json'), codexKey);
    expect(response.status).toBe(200);
    const events = sseData(await response.text());
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { output: [{ type: 'message', content: [{ type: 'output_text', text: 'The secret word is pelican.' }] }] } });

    const contents = (gemini.server.requests[0].body as Json).contents as Json[];
    expect(contents.at(-2)).toMatchObject({ role: 'model', parts: [{ functionCall: { name: 'exec_command', args: { cmd: 'cat notes.txt' } } }] });
    expect(JSON.stringify(contents.at(-1))).toContain('The secret word is pelican.');
  });

  it("with [agents] enabled, its multi_agent_v1 namespace reaches the model as qualified function tools, and the model's call comes back with its namespace", async () => {
    gemini.options.functionCalls = [{ name: 'multi_agent_v1__spawn_agent', args: { message: 'Read notes.txt' } }];
    const request = recorded('codex-0.171.0-namespace-turn-1.json');
    const namespace = request.body.tools.find((tool: Json) => tool.type === 'namespace');
    expect(namespace).toMatchObject({ name: 'multi_agent_v1', tools: expect.arrayContaining([expect.objectContaining({ type: 'function', name: 'spawn_agent' })]) });

    const response = await replay(request, codexKey);
    expect(response.status).toBe(200);
    const call = sseData(await response.text()).find((event) => event.type === 'response.output_item.done')?.item;
    expect(call).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: JSON.stringify({ message: 'Read notes.txt' }) });

    const declared = ((gemini.server.requests[0].body as Json).tools[0].functionDeclarations as Json[]).map((declaration) => declaration.name);
    expect(declared).toEqual(expect.arrayContaining(['exec_command', ...namespace.tools.map((tool: Json) => `multi_agent_v1__${tool.name}`)]));
    expect(declared).not.toContain('spawn_agent');
  });

  it('its next request replays the function_call with its namespace: the model sees the qualified call and its output', async () => {
    const request = recorded('codex-0.171.0-namespace-turn-2.json');
    expect(request.body.input.at(-2)).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1' });
    const response = await replay(request, codexKey);
    expect(response.status).toBe(200);
    expect(sseData(await response.text()).at(-1)).toMatchObject({ type: 'response.completed' });

    const contents = (gemini.server.requests[0].body as Json).contents as Json[];
    expect(contents.at(-2)).toMatchObject({ role: 'model', parts: [{ functionCall: { name: 'multi_agent_v1__spawn_agent', args: { message: 'Read notes.txt and report the secret word' } } }] });
    expect(contents.at(-1)).toMatchObject({ role: 'user', parts: [{ functionResponse: { name: 'multi_agent_v1__spawn_agent' } }] });
  });

  it("a goal's objective (function_call_output with namespace agent and no call_id) reaches the model as a system instruction", async () => {
    const request = recorded('codex-0.171.0-goal-turn-2.json');
    expect(request.body.input.at(-1)).toMatchObject({ type: 'function_call_output', namespace: 'agent', name: 'goal_objective' });
    expect(request.body.input.at(-1)).not.toHaveProperty('call_id');
    const response = await replay(request, codexKey);
    expect(response.status).toBe(200);
    expect(sseData(await response.text()).at(-1)).toMatchObject({ type: 'response.completed' });

    const sent = gemini.server.requests[0].body as Json;
    expect(JSON.stringify(sent.systemInstruction)).toContain('agent.goal_objective: Find the secret word');
    expect(sent.contents.at(-1)).toMatchObject({ role: 'user', parts: [{ functionResponse: { name: 'create_goal' } }] });
  });
});

describe('Gemini CLI 0.61.0 on /gemini/v1beta, with the AuthModule configured', () => {
  const geminiKey = { 'x-goog-api-key': TOKEN };

  it('its first request of a turn answers to the key in x-goog-api-key, not to the JWT guard, and streams a function call', async () => {
    gemini.options.functionCalls = [{ name: 'read_file', args: { file_path: 'notes.txt' } }];
    const request = recorded('gemini-cli-0.61.0-tool-turn-1.json');
    const response = await replay(request, geminiKey);
    expect(response.status).toBe(200);
    const chunks = sseData(await response.text());
    const parts = chunks.flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? []);
    expect(parts).toContainEqual(expect.objectContaining({ functionCall: { name: 'read_file', args: { file_path: 'notes.txt' } } }));

    const sent = gemini.server.requests[0].body as Json;
    const declared = request.body.tools.flatMap((tool: Json) => tool.functionDeclarations.map((declaration: Json) => declaration.name));
    expect(sent.tools[0].functionDeclarations.map((declaration: Json) => declaration.name)).toEqual(declared);
  });

  it("its second request (functionResponse after its own thoughtSignature) reaches the model with the file's text", async () => {
    const response = await replay(recorded('gemini-cli-0.61.0-tool-turn-2.json'), geminiKey);
    expect(response.status).toBe(200);
    const text = sseData(await response.text()).flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? []).map((part: Json) => part.text).join('');
    expect(text).toBe('The secret word is pelican.');
    const contents = (gemini.server.requests[0].body as Json).contents as Json[];
    expect(contents.at(-1)).toMatchObject({ role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'The secret word is pelican.\n' } } }] });
  });

  it("its model router's request (responseJsonSchema in Schema's capitals), aliased to a Claude model, reaches it as JSON Schema", async () => {
    anthropic.server.reset();
    const response = await replay(recorded('gemini-cli-0.61.0-model-router.json'), geminiKey);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as Json;
    expect(JSON.parse(answer.candidates[0].content.parts[0].text)).toEqual({ complexity_reasoning: expect.any(String), complexity_score: expect.any(Number) });
    const schema = (anthropic.server.requests[0].body as Json).tools[0].input_schema;
    expect(schema).toMatchObject({ type: 'object', properties: { complexity_reasoning: { type: 'string' }, complexity_score: { type: 'integer' } } });
  });

  it('a wrong key is refused in Google\'s shape, not the JWT guard\'s', async () => {
    const response = await replay(recorded('gemini-cli-0.61.0-tool-turn-1.json'), { 'x-goog-api-key': 'wrong-key' });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
  });
});

describe('Claude Code on /anthropic/v1, with the AuthModule configured', () => {
  it('answers to the key in x-api-key, not to the JWT guard', async () => {
    const response = await fetch(`${origin}/anthropic/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'x-api-key': TOKEN, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Hello from Claude here' }] });
  });

  it('on an Anthropic model (the pass-through path) its first request reaches Anthropic as sent: betas, cache_control, thinking; the signed thinking comes back', async () => {
    anthropic.server.reset();
    const request = recorded('claude-code-2.1.197-passthrough-turn-1.json');
    expect(request.body).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', thinking: { type: 'enabled' }, context_management: expect.any(Object), stream: true });
    const response = await replay(request, { 'x-api-key': TOKEN });
    expect(response.status).toBe(200);
    const events = sseData(await response.text());
    expect(events).toContainEqual(expect.objectContaining({ type: 'content_block_delta', delta: expect.objectContaining({ type: 'signature_delta' }) }));
    expect(events.filter((event) => event.type === 'content_block_start').map((event) => event.content_block.type)).toEqual(['thinking', 'text', 'tool_use', 'tool_use']);

    const [sent] = anthropic.server.requests;
    expect(sent.body).toEqual({ ...request.body, model: 'claude-sonnet-4-5' });
    expect(sent.headers['anthropic-beta']).toBe(request.headers['anthropic-beta']);
    expect(sent.headers['anthropic-version']).toBe(request.headers['anthropic-version']);
  });

  it('its next request (the signed thinking block and tool results, cache_control on the last) reaches Anthropic as sent, and its prefix is cached', async () => {
    anthropic.server.reset();
    const request = recorded('claude-code-2.1.197-passthrough-turn-2.json');
    const [, assistant, results] = request.body.messages as Json[];
    expect(assistant.content[0]).toMatchObject({ type: 'thinking', signature: expect.any(String) });
    expect(results.content.at(-1)).toMatchObject({ type: 'tool_result', cache_control: { type: 'ephemeral' } });
    // The emulator refuses a thinking block whose signature does not match its text: a 200 proves it arrived intact.
    const response = await replay(request, { 'x-api-key': TOKEN });
    expect(response.status).toBe(200);
    const events = sseData(await response.text());
    // Cached by the first request or written by this one: either way its cache_control breakpoints arrived.
    const usage = events.find((event) => event.type === 'message_start')?.message.usage;
    expect(usage.cache_read_input_tokens + usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(anthropic.server.requests[0].body).toEqual({ ...request.body, model: 'claude-sonnet-4-5' });
  });

  it('a wrong key is a 401 with x-should-retry: false, which stops Claude Code after one request instead of ten', async () => {
    const response = await fetch(`${origin}/anthropic/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'x-api-key': 'wrong-key', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });
});
