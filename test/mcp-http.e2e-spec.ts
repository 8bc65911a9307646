/**
 * MCP over Streamable HTTP on the real server (AppModule on Fastify, listening on loopback), driven by the
 * MCP SDK's own Client and by raw requests for each refusal: sessions bound to the principal, 202 for
 * notifications, one-shot SSE, DELETE, 404 for unknown/expired sessions, protocol-version check, Origin
 * allow-list, bearer policy, bounded bodies; then the Redis session store shared by two instances.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createClient } from '@keyv/redis';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { actionBlock, observationsIn, ScriptedChatEmulator } from './emulators/scripted-chat-emulator';
import { SearxngEmulator } from './emulators/searxng-emulator';
import { TestApps } from './support/test-apps';

const KEY = 'sk-mcp-http-KEY-3317';
const TOKEN = 'mcp-token-for-tests-5c1a';
const SECRET = 'm'.repeat(48);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ACCEPT = 'application/json, text/event-stream';

let openai: OpenAiEmulator;
let chat: ScriptedChatEmulator;
let searxng: SearxngEmulator;
let apps: TestApps;
const clients: Client[] = [];

beforeAll(async () => {
  [openai, chat, searxng] = await Promise.all([OpenAiEmulator.start({ apiKey: KEY }), ScriptedChatEmulator.start('gpt-test'), SearxngEmulator.start()]);
  apps = new TestApps('tollgate-mcp-http-', {
    OPENAI_API_KEY: KEY,
    OPENAI_URL: openai.url,
    OPENAI_CHAT_MODEL: 'gpt-test',
    SCRIPTED_URL: chat.url,
    SEARXNG_URL: searxng.url,
    SEARXNG_ALLOW_PRIVATE_NETWORK: 'true',
  });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await apps.close();
  await Promise.all([openai.close(), chat.close(), searxng.close()]);
});

// The agent is scripted in the JSON action protocol, which openai_compatible (now with native tools) needs pinned.
const PROVIDERS =
  'version: 1\nai: { retry_attempts: 0, default_provider: openai, enable_fallback: false }\nagent: { tool_protocol: prompt }\nproviders:\n  openai: {}\n  scripted: { kind: openai_compatible, url_env: SCRIPTED_URL, chat_model: gpt-test }\n';

/** A listening server from YAML; returns the MCP endpoint URL. */
async function startServer(mcpYaml: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { config, origin } = await apps.listen(`${PROVIDERS}mcp: ${mcpYaml}\n`, env);
  return `${origin}${config.server.basePath}${config.mcp.path}`;
}

async function connect(url: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'tollgate-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return { client, transport };
}

interface RawOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  session?: string;
  token?: string | null;
}

async function raw(url: string, options: RawOptions = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = { accept: ACCEPT, ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token !== null) headers.authorization = `Bearer ${options.token ?? TOKEN}`;
  if (options.session) headers['mcp-session-id'] = options.session;
  const response = await fetch(url, { method: options.method ?? 'POST', headers, body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const initialize = (version = LATEST_PROTOCOL_VERSION) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** Opens a session with raw requests; returns its id. */
async function openSession(url: string, token?: string): Promise<string> {
  const opened = await raw(url, { body: initialize(), token });
  expect(opened.status).toBe(200);
  const session = opened.headers.get('mcp-session-id')!;
  expect(session).toMatch(/^[0-9a-f-]{36}$/);
  expect((await raw(url, { body: { jsonrpc: '2.0', method: 'notifications/initialized' }, session, token, headers: { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } })).status).toBe(202);
  return session;
}

function expectRefusal(response: { status: number; text: string }, status: number, says: string): void {
  expect(response.status).toBe(status);
  expect(JSON.parse(response.text)).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining(says) }, id: null });
}

/** The JSON-RPC messages of a one-shot SSE body. */
function sseMessages(text: string): Array<Record<string, unknown>> {
  return text.split('\n').filter((line) => line.startsWith('data: ') && line.length > 6).map((line) => JSON.parse(line.slice(6)));
}

describe('Streamable HTTP with the SDK Client (bearer token)', () => {
  let url: string;
  beforeAll(async () => {
    url = await startServer(`{ enabled: true, token: ${TOKEN}, allowed_origins: ["https://app.example.com"] }`);
  });

  it('lists tools and resources, calls generate and agent, reads resources, and ends the session with DELETE', async () => {
    const { client, transport } = await connect(url);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerVersion()).toMatchObject({ name: 'tollgate' });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['generate', 'embed', 'search', 'providers', 'health', 'agent']);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['tollgate://providers', 'tollgate://health']);

    const generated = await client.callTool({ name: 'generate', arguments: { prompt: 'hi over http' } });
    expect(JSON.parse((generated.content as Array<{ text: string }>)[0].text)).toMatchObject({ response: 'echo: hi over http', provider: 'openai' });

    // JSON output and an image reach the provider in its format; a bad image URL is a tool error naming it.
    const described = await client.callTool({
      name: 'generate',
      arguments: { prompt: 'What is this?', response_format: { type: 'json_object' }, images: ['data:image/png;base64,iVBORw==', 'https://example.com/a.jpg'] },
    });
    expect(described.isError).toBeFalsy();
    expect(openai.server.requestsTo('/v1/chat/completions').at(-1)?.body).toMatchObject({
      response_format: { type: 'json_object' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw==' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
          ],
        },
      ],
    });
    const badImage = await client.callTool({ name: 'generate', arguments: { prompt: 'x', images: ['data:image/png;base64,%%%'] } });
    expect(badImage.isError).toBe(true);
    expect((badImage.content as Array<{ text: string }>)[0].text).toContain('images[0] must be an http(s) URL or a base64 data: URL');

    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('web_search', { query: 'mcp http' }) : 'From the web.');
    const ran = await client.callTool({ name: 'agent', arguments: { prompt: 'search it', tools: ['web_search'], provider: 'scripted', max_loops: 2 } });
    expect(JSON.parse((ran.content as Array<{ text: string }>)[0].text)).toMatchObject({ response: 'From the web.', loops_run: 2, success: true });

    const providers = await client.readResource({ uri: 'tollgate://providers' });
    expect(JSON.stringify(providers)).not.toContain(KEY);

    const session = transport.sessionId!;
    await transport.terminateSession();
    expectRefusal(await raw(url, { body: { jsonrpc: '2.0', id: 9, method: 'tools/list' }, session, headers: { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } }), 404, 'Session not found');
  });

  it('answers notifications with 202 and requests with a one-shot SSE stream carrying the response', async () => {
    const session = await openSession(url);
    const listed = await raw(url, { body: { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session, headers: { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('content-type')).toContain('text/event-stream');
    expect(listed.headers.get('x-request-id')).toBeTruthy();
    const messages = sseMessages(listed.text);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ jsonrpc: '2.0', id: 2, result: { tools: expect.any(Array) } });
    const notified = await raw(url, { body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } }, session });
    expect(notified).toMatchObject({ status: 202, text: '' });
  });

  it('refuses missing, unknown and ended sessions, and a second initialize on a session', async () => {
    expectRefusal(await raw(url, { body: { jsonrpc: '2.0', id: 3, method: 'tools/list' } }), 400, 'Mcp-Session-Id header is required');
    expectRefusal(await raw(url, { body: { jsonrpc: '2.0', id: 3, method: 'tools/list' }, session: randomUUID() }), 404, 'Session not found');
    expectRefusal(await raw(url, { body: { jsonrpc: '2.0', id: 3, method: 'tools/list' }, session: 'not-a-uuid' }), 404, 'Session not found');
    expectRefusal(await raw(url, { method: 'DELETE', session: randomUUID() }), 404, 'Session not found');
    const session = await openSession(url);
    expectRefusal(await raw(url, { body: initialize(), session }), 400, 'initialize must not carry');
    expect((await raw(url, { method: 'DELETE', session })).status).toBe(200);
    expectRefusal(await raw(url, { method: 'DELETE', session }), 404, 'Session not found');
  });

  it('checks the protocol version header against the session', async () => {
    const older = SUPPORTED_PROTOCOL_VERSIONS.find((v) => v !== LATEST_PROTOCOL_VERSION)!;
    const session = await openSession(url);
    const list = { jsonrpc: '2.0', id: 4, method: 'tools/list' };
    expectRefusal(await raw(url, { body: list, session, headers: { 'mcp-protocol-version': older } }), 400, 'does not match the session');
    expect((await raw(url, { body: list, session, headers: { 'mcp-protocol-version': '1999-01-01' } })).status).toBe(400);
    expect((await raw(url, { body: list, session, headers: { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } })).status).toBe(200);
  });

  it('refuses Origins outside the allow-list with 403, before anything else', async () => {
    expectRefusal(await raw(url, { body: initialize(), headers: { origin: 'https://evil.example.net' } }), 403, 'Origin not allowed');
    expectRefusal(await raw(url, { body: initialize(), headers: { origin: 'https://evil.example.net' }, token: null }), 403, 'Origin not allowed');
    expect((await raw(url, { body: initialize(), headers: { origin: 'https://app.example.com' } })).status).toBe(200);
  });

  it('requires the bearer token (401 with WWW-Authenticate), for the SDK Client too', async () => {
    const missing = await raw(url, { body: initialize(), token: null });
    expectRefusal(missing, 401, 'bearer token');
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expectRefusal(await raw(url, { body: initialize(), token: `${TOKEN}x` }), 401, 'bearer token');
    await expect(connect(url, { authorization: 'Bearer wrong' })).rejects.toThrow();
  });

  it('offers no standalone GET stream (405)', async () => {
    const session = await openSession(url);
    const got = await raw(url, { method: 'GET', session });
    expect(got.status).toBe(405);
    expect(got.headers.get('allow')).toBe('POST, DELETE');
  });
});

describe('Streamable HTTP limits', () => {
  it('refuses bodies over mcp.max_body_bytes (413) and expires idle sessions (404)', async () => {
    const url = await startServer(`{ enabled: true, auth: none, max_body_bytes: 2048, session_ttl: 0.5, path: /tools/mcp }`);
    expect(url.endsWith('/tools/mcp')).toBe(true);
    const session = await openSession(url, undefined);
    const big = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'generate', arguments: { prompt: 'x'.repeat(4096) } } };
    expectRefusal(await raw(url, { body: big, session }), 413, 'exceeds 2048 bytes');
    await new Promise((resolve) => setTimeout(resolve, 700));
    expectRefusal(await raw(url, { body: { jsonrpc: '2.0', id: 6, method: 'tools/list' }, session }), 404, 'Session not found');
  });
});

describe('Streamable HTTP behind AuthModule (mcp.auth jwt)', () => {
  const jwt = (userId: string) => {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const head = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ user_id: userId, tenant_id: 't-1', exp: Math.floor(Date.now() / 1000) + 300 })}`;
    return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;
  };

  it('binds each session to the principal that opened it', async () => {
    const url = await startServer('{ enabled: true, auth: jwt }', { JWT_SECRET: SECRET });
    const alice = jwt('alice');
    const bob = jwt('bob');
    const session = await openSession(url, alice);
    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
    expectRefusal(await raw(url, { body: list, session, token: bob }), 404, 'Session not found');
    expectRefusal(await raw(url, { method: 'DELETE', session, token: bob }), 404, 'Session not found');
    expect((await raw(url, { body: list, session, token: alice })).status).toBe(200);
    // AuthModule's own guard refuses a request without a valid JWT.
    expect((await raw(url, { body: list, session, token: TOKEN })).status).toBe(401);
    const { client } = await connect(url, { authorization: `Bearer ${jwt('carol')}` });
    expect((await client.listTools()).tools).toHaveLength(6);
  });
});

describe('Redis session store shared by two instances', () => {
  const prefix = `tollgate-test:mcp:${randomUUID()}:`;
  afterAll(async () => {
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(keys);
    await redis.quit();
  });

  it('opens a session on one instance, uses and ends it on the other', async () => {
    const yaml = `{ enabled: true, token: ${TOKEN}, session_store: redis, redis_url: "${REDIS_URL}", redis_key_prefix: "${prefix}", session_ttl: 30 }`;
    const [first, second] = await Promise.all([startServer(yaml), startServer(yaml)]);
    expect(first).not.toBe(second);
    const session = await openSession(first);
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    const stored = JSON.parse(String(await redis.get(`${prefix}${session}`)));
    expect(stored).toMatchObject({ id: session, principal: 'token', protocolVersion: LATEST_PROTOCOL_VERSION });
    const ttl = await redis.pTTL(`${prefix}${session}`);
    expect(ttl).toBeGreaterThan(20_000);
    expect(ttl).toBeLessThanOrEqual(30_000);

    const listed = await raw(second, { body: { jsonrpc: '2.0', id: 8, method: 'tools/list' }, session, headers: { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } });
    expect(listed.status).toBe(200);
    expect(sseMessages(listed.text)[0]).toMatchObject({ id: 8 });
    expect((await raw(second, { method: 'DELETE', session })).status).toBe(200);
    expect(await redis.exists(`${prefix}${session}`)).toBe(0);
    expectRefusal(await raw(first, { body: { jsonrpc: '2.0', id: 9, method: 'tools/list' }, session }), 404, 'Session not found');
    // A corrupted value is no session at all.
    const forged = randomUUID();
    await redis.set(`${prefix}${forged}`, '{not json', { PX: 10_000 });
    expectRefusal(await raw(first, { body: { jsonrpc: '2.0', id: 10, method: 'tools/list' }, session: forged }), 404, 'Session not found');
    await redis.quit();
  });

  it('answers 503 while the session store is unreachable, without hanging', async () => {
    const url = await startServer(`{ enabled: true, token: ${TOKEN}, session_store: redis, redis_url: "redis://127.0.0.1:1", redis_key_prefix: "${prefix}" }`);
    const started = Date.now();
    expectRefusal(await raw(url, { body: initialize() }), 503, 'MCP sessions are unavailable');
    expectRefusal(await raw(url, { body: { jsonrpc: '2.0', id: 11, method: 'tools/list' }, session: randomUUID() }), 503, 'MCP sessions are unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
