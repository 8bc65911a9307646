/**
 * POST /v1/agent on the real application (AppModule on Fastify from a loaded configuration) against a
 * scripted OpenAI-wire emulator and a SearXNG emulator: the result shape, validation and error envelope,
 * and tenant/principal from AuthModule's context under interleaved requests, read back from the audit log.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { actionBlock, observationsIn, ScriptedChatEmulator } from './emulators/scripted-chat-emulator';
import { SearxngEmulator } from './emulators/searxng-emulator';
import { TestApps } from './support/test-apps';

const TOKEN = 'api-token-for-agent-tests';
const SECRET = 'j'.repeat(48);
const auth = { authorization: `Bearer ${TOKEN}` };

let chat: ScriptedChatEmulator;
let searxng: SearxngEmulator;
let apps: TestApps;

beforeAll(async () => {
  [chat, searxng] = await Promise.all([ScriptedChatEmulator.start('gpt-test'), SearxngEmulator.start()]);
  apps = new TestApps('tollgate-agent-rest-', {
    OPENAI_API_KEY: 'sk-agent',
    OPENAI_URL: chat.url,
    OPENAI_CHAT_MODEL: 'gpt-test',
    SEARXNG_URL: searxng.url,
    SEARXNG_ALLOW_PRIVATE_NETWORK: 'true',
    API_TOKEN: TOKEN,
  });
});

afterAll(async () => {
  await apps.close();
  await Promise.all([chat.close(), searxng.close()]);
});

beforeEach(() => {
  chat.reset();
  searxng.reset();
});

const PROVIDERS_YAML = 'version: 1\nai: { retry_attempts: 0 }\nproviders:\n  openai: { timeout: 2 }\n';
// The prompt protocol whatever the adapter translates: test/agent-native-tools.e2e-spec.ts covers native tool calling.
const BASE_YAML = `${PROVIDERS_YAML}agent: { max_loops: 4, max_task_bytes: 64, tool_protocol: prompt }\n`;

describe('POST /v1/agent', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await apps.build(BASE_YAML);
  });

  const post = (body: unknown, headers: Record<string, string> = auth) =>
    app.inject({ method: 'POST', url: '/v1/agent', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });

  function expectError(response: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number, type: string, says: string) {
    expect(response.statusCode).toBe(status);
    const body = JSON.parse(response.body);
    expect(body).toEqual({ error: { type, message: expect.stringContaining(says) }, request_id: response.headers['x-request-id'] });
  }

  it('answers directly with an empty tool list', async () => {
    chat.script = () => 'Forty-two.';
    const response = await post({ prompt: 'What is six times seven?', tools: [] });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      response: 'Forty-two.',
      provider: 'openai',
      model: 'gpt-test',
      loops_run: 1,
      success: true,
      actions: [],
      request_id: response.headers['x-request-id'],
    });
  });

  it('runs one allowlisted search, then answers', async () => {
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('web_search', { query: 'rust traits', limit: 1 }) : 'Traits are interfaces.');
    const response = await post({ prompt: 'What are rust traits?', tools: ['web_search'], max_loops: 2 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      response: 'Traits are interfaces.',
      loops_run: 2,
      success: true,
      actions: [{ loop: 1, tool: 'web_search', outcome: 'ok', truncated: false, duration_ms: expect.any(Number) }],
    });
    expect(searxng.server.requestsTo('/search')).toHaveLength(1);
  });

  it('reports the loop limit as success false', async () => {
    chat.script = () => actionBlock('web_search', { query: 'again' });
    const response = await post({ prompt: 'loop', tools: ['web_search'], max_loops: 2 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: false, loops_run: 2, response: '' });
  });

  it('answers a broken action protocol with 502 agent_protocol_error', async () => {
    chat.script = () => `${actionBlock('web_search', { query: 'a' })}\n${actionBlock('web_search', { query: 'b' })}`;
    expectError(await post({ prompt: 'two at once', tools: ['web_search'] }), 502, 'agent_protocol_error', 'exactly one is allowed');
    chat.script = () => actionBlock('shell', { cmd: 'ls' });
    expectError(await post({ prompt: 'not allowed', tools: ['web_search'] }), 502, 'agent_protocol_error', 'not allowed in this run');
    expect(searxng.server.requests).toEqual([]);
  });

  it('refuses bad bodies with the error envelope naming the field, before calling the provider', async () => {
    expectError(await post({ prompt: 'x' }), 400, 'invalid_request', 'tools');
    expectError(await post({ prompt: 'x', tools: 'web_search' }), 400, 'invalid_request', 'tools');
    expectError(await post({ prompt: 'x', tools: [7] }), 400, 'invalid_request', 'tools');
    expectError(await post({ tools: [] }), 400, 'invalid_request', 'prompt');
    expectError(await post({ prompt: 'x', tools: [], max_loops: 0 }), 400, 'invalid_request', 'max_loops');
    expectError(await post({ prompt: 'x', tools: [], max_loops: 5 }), 400, 'invalid_request', 'max_loops must be an integer from 1 to 4');
    expectError(await post({ prompt: '€'.repeat(30), tools: [] }), 400, 'invalid_request', 'prompt must be at most 64 bytes');
    expectError(await post({ prompt: 'x', tools: ['calendar'] }), 400, 'tool_not_configured', "tool 'calendar' is not configured");
    expectError(await post({ prompt: 'x', tools: [], provider: 'ghost' }), 400, 'unknown_provider', 'ghost');
    expect(chat.turns).toEqual([]);
  });

  it('requires the API token', async () => {
    const response = await post({ prompt: 'x', tools: [] }, {});
    expect(response.statusCode).toBe(401);
    expect(response.json().error.type).toBe('authentication_required');
  });
});

describe('POST /v1/agent behind AuthModule (api.auth jwt)', () => {
  const jwt = (userId: string, tenantId: string) => {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const head = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ user_id: userId, tenant_id: tenantId, exp: Math.floor(Date.now() / 1000) + 300 })}`;
    return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;
  };

  it('takes tenant and principal from the auth context, per request, under interleaved requests', async () => {
    const audit = join(apps.work, 'agent-audit.jsonl');
    const app = await apps.build(`${PROVIDERS_YAML}api: { auth: jwt }\nagent: { audit_log: agent-audit.jsonl, tool_protocol: prompt }\n`, { JWT_SECRET: SECRET });
    chat.script = ({ user }) => (observationsIn(user).length === 0 ? actionBlock('web_search', { query: 'q' }) : 'done');
    const users = Array.from({ length: 12 }, (_, i) => ({ user: `user-${i}`, tenant: `tenant-${i % 3}` }));
    const responses = await Promise.all(
      users.map(({ user, tenant }) =>
        app.inject({
          method: 'POST',
          url: '/v1/agent',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt(user, tenant)}` },
          payload: JSON.stringify({ prompt: 'find', tools: ['web_search'] }),
        }),
      ),
    );
    responses.forEach((response) => expect(response.statusCode).toBe(200));
    // Closing flushes the audit log.
    await apps.closeEarly(app);
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(users.length * 4);
    users.forEach(({ user, tenant }, i) => {
      const requestId = responses[i].headers['x-request-id'];
      const mine = lines.filter((line) => line.request_id === requestId);
      expect(mine.map((line) => line.event)).toEqual(['agent.iteration', 'agent.tool_call', 'agent.iteration', 'agent.completed']);
      for (const line of mine) expect(line).toMatchObject({ principal: user, tenant_id: tenant });
    });
    expect(readFileSync(audit, 'utf8')).not.toContain('find');
  });
});
