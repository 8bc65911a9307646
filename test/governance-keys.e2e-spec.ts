/**
 * API keys end to end: two real server processes (node dist/src/main.js) sharing one Redis key store and
 * an OpenAI emulator upstream. Keys are created, listed, changed and revoked through /v1/admin/keys, used
 * on /v1, /openai/v1 and MCP, and a key revoked on one server is refused by the other within a second.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { ServerProcesses } from './support/server-process';
import { dropRedisKeys } from './support/store-cleanup';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const API_TOKEN = 'api-token-for-governance-keys';
const ADMIN_TOKEN = 'admin-token-for-governance-keys';
const UPSTREAM_KEY = 'sk-emulator-governance';
/** The bound: a revoked key is refused by every process within this time. */
const REVOCATION_BOUND_MS = 1000;

const run = randomUUID();
const keyPrefix = `tollgate:test-governance-keys:${run}:`;
let work: string;
let upstream: OpenAiEmulator;
const servers = new ServerProcesses();
let first: string;
let second: string;

function startServer(configFile: string): Promise<string> {
  return servers.start(configFile, work).url;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function call(server: string, method: string, path: string, bearer?: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${server}${path}`, {
    method,
    headers: {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: response.headers };
}

const admin = (server: string, method: string, path: string, body?: unknown) => call(server, method, `/v1/admin/keys${path}`, ADMIN_TOKEN, body);

async function createKey(body: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const created = await admin(first, 'POST', '', body);
  expect(created.status).toBe(201);
  return { key: created.body.key as string, id: created.body.id as string };
}

function chat(server: string, bearer: string, model = 'openai/gpt-test') {
  return call(server, 'POST', '/openai/v1/chat/completions', bearer, { model, messages: [{ role: 'user', content: 'Hello' }] });
}

/** Polls `server` until it refuses `key`; resolves with when (ms after `since`) the last accepted request was sent. */
async function acceptedFor(server: string, key: string, since: number): Promise<number> {
  let lastAccepted = 0;
  for (;;) {
    const sentAt = performance.now() - since;
    const { status } = await call(server, 'GET', '/v1/providers', key);
    if (status === 401) return lastAccepted;
    expect(status).toBe(200);
    lastAccepted = sentAt;
    if (sentAt > 10_000) throw new Error('the key was never refused');
    await new Promise((wait) => setTimeout(wait, 10));
  }
}

/** Every value under this run's prefix, whatever the Redis type. */
async function storedValues(): Promise<string[]> {
  const redis = new Redis(REDIS_URL);
  try {
    const names = await redis.keys(`${keyPrefix}*`);
    return await Promise.all(
      names.map(async (name) => {
        const type = await redis.type(name);
        if (type === 'hash') return JSON.stringify(await redis.hgetall(name));
        if (type === 'zset') return JSON.stringify(await redis.zrange(name, 0, -1));
        return String(await redis.get(name));
      }),
    );
  } finally {
    redis.disconnect();
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tollgate-governance-keys-'));
  upstream = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY });
  const configFile = join(work, 'tollgate.yaml');
  writeFileSync(
    configFile,
    [
      'version: 1',
      `api: { token: "${API_TOKEN}" }`,
      'providers:',
      `  openai: { url: "${upstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 5 }`,
      `mcp: { enabled: true, token: "${API_TOKEN}" }`,
      'governance:',
      `  keys: { store: redis, url: "${REDIS_URL}", key_prefix: "${keyPrefix}" }`,
      `  admin_token: "${ADMIN_TOKEN}"`,
      '',
    ].join('\n'),
  );
  [first, second] = await Promise.all([startServer(configFile), startServer(configFile)]);
}, 60_000);

afterAll(async () => {
  await servers.stopAll();
  await dropRedisKeys(REDIS_URL, keyPrefix);
  await upstream?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the admin keys API', () => {
  it('answers the admin token only: 403 for the API token, 401 without a valid token', async () => {
    expect((await admin(first, 'GET', '')).status).toBe(200);
    const withApiToken = await call(first, 'GET', '/v1/admin/keys', API_TOKEN);
    expect(withApiToken.status).toBe(403);
    expect(withApiToken.body).toMatchObject({ error: { type: 'forbidden', message: 'This operation needs the admin token or an admin role.' } });
    expect((await call(first, 'GET', '/v1/admin/keys')).status).toBe(401);
    expect((await call(first, 'GET', '/v1/admin/keys', 'not-a-token')).status).toBe(401);
  });

  it('creates a key shown once, never storing or showing it again', async () => {
    const created = await admin(first, 'POST', '', {
      tenant: 't-1',
      sub_tenant: 'north',
      name: 'ci',
      models: ['openai/*'],
      budget_usd: 5,
      period: 'day',
      rpm: 60,
      tpm: 100000,
      expires: '30d',
    });
    expect(created.status).toBe(201);
    const { key, id } = created.body as { key: string; id: string };
    expect(key).toMatch(new RegExp(`^tg_${id}_[A-Za-z0-9_-]{43}$`));
    expect(created.body).toMatchObject({
      tenant: 't-1',
      sub_tenant: 'north',
      name: 'ci',
      models: ['openai/*'],
      budget: { period: 'day', usd: 5 },
      rpm: 60,
      tpm: 100000,
      status: 'active',
      revoked_at: null,
    });
    expect(Date.parse(created.body.expires_at as string) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const shown = await admin(second, 'GET', `/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ id, tenant: 't-1', name: 'ci' });
    expect(JSON.stringify(shown.body)).not.toContain(key.slice(16));
    const listed = await admin(second, 'GET', '?tenant=t-1');
    expect((listed.body.keys as Array<{ id: string }>).map((entry) => entry.id)).toContain(id);
    expect(JSON.stringify(listed.body)).not.toContain(key.slice(16));
    expect((await storedValues()).join('\n')).not.toContain(key.slice(16));
  });

  it('refuses bad input naming each field', async () => {
    const refused = await admin(first, 'POST', '', { tenant: 't-1', budget_usd: -5, period: 'week', models: ['openai'], expires: '30x' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { type: 'invalid_request' } });
    const message = (refused.body.error as { message: string }).message;
    expect(message).toContain('period must be one of the following values: day, month');
    const semantic = await admin(first, 'POST', '', { tenant: 't-1', budget_usd: -5, period: 'day', models: ['openai'], expires: '30x' });
    expect(semantic.status).toBe(400);
    expect((semantic.body.error as { message: string }).message).toBe(
      'models[0]: "openai" must be provider/model (e.g. openai/* or anthropic/claude-*); budget_usd: must be a positive amount of dollars (got -5); ' +
        'expires: must be a duration such as 30d, 12h, 90m, 2w or 45s, up to 3650d (got "30x")',
    );
    expect((await admin(first, 'POST', '', { name: 'x' })).body).toMatchObject({ error: { message: expect.stringContaining('tenant') } });
    expect((await admin(first, 'POST', '', { tenant: 't', colour: 'red' })).body).toMatchObject({ error: { message: 'unknown field "colour"' } });
  });

  it('answers 404 key_not_found for unknown or malformed ids', async () => {
    for (const id of ['000000000000', 'not-an-id']) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const answer = await admin(first, method, `/${id}`, method === 'PATCH' ? { rpm: 1 } : undefined);
        expect({ method, status: answer.status, body: answer.body }).toMatchObject({ method, status: 404, body: { error: { type: 'key_not_found' } } });
      }
    }
  });

  it('updates settings, clearing those set to null, and keeps tenant fixed', async () => {
    const { id } = await createKey({ tenant: 't-2', models: ['openai/*'], rpm: 5 });
    const updated = await admin(second, 'PATCH', `/${id}`, { models: null, rpm: 7, budget_tokens: 1000, period: 'month' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, tenant: 't-2', models: null, rpm: 7, budget: { tokens: 1000, period: 'month' } });
    const refused = await admin(second, 'PATCH', `/${id}`, { tenant: 't-3' });
    expect(refused.status).toBe(400);
    expect((refused.body.error as { message: string }).message).toContain('unknown field "tenant"');
  });
});

describe('a key', () => {
  it('authenticates /v1 and /openai/v1 on every server', async () => {
    const { key } = await createKey({ tenant: 't-1', name: 'use' });
    for (const server of [first, second]) expect((await call(server, 'GET', '/v1/providers', key)).status).toBe(200);
    const answer = await chat(second, key);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ object: 'chat.completion' });
  });

  it('is refused with 401 invalid_key when malformed or unknown, in each surface’s shape', async () => {
    const unknown = `tg_0123456789ab_${'A'.repeat(43)}`;
    for (const bearer of ['tg_malformed', unknown]) {
      const v1 = await call(first, 'GET', '/v1/providers', bearer);
      expect(v1.status).toBe(401);
      expect(v1.body).toMatchObject({ error: { type: 'invalid_key', message: 'The API key is invalid, revoked or expired.' } });
      expect(v1.headers.get('www-authenticate')).toBe('Bearer');
      const openai = await chat(first, bearer);
      expect(openai.status).toBe(401);
      expect(openai.body).toMatchObject({ error: { code: 'invalid_api_key' } });
    }
  });

  it('opens an MCP session, which the shared token cannot resume', async () => {
    const { key } = await createKey({ tenant: 't-1' });
    const post = (bearer: string, body: unknown, session?: string) =>
      fetch(`${first}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bearer}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } : {}),
        },
        body: JSON.stringify(body),
      });
    const opened = await post(key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'keys', version: '1' } },
    });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    expect((await post(key, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
    expect((await post(API_TOKEN, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session)).status).toBe(404);
    expect((await post(`tg_0123456789ab_${'A'.repeat(43)}`, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session)).status).toBe(401);
  });

  it('revoked on one server is refused by the other within a second', async () => {
    const { key, id } = await createKey({ tenant: 't-1', name: 'revoke-me' });
    // Both servers hold the key's record in their cache when it is revoked.
    expect((await call(first, 'GET', '/v1/providers', key)).status).toBe(200);
    expect((await call(second, 'GET', '/v1/providers', key)).status).toBe(200);
    const revokedAt = performance.now();
    const revoked = await admin(first, 'DELETE', `/${id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id, status: 'revoked' });
    const [onFirst, onSecond] = await Promise.all([acceptedFor(first, key, revokedAt), acceptedFor(second, key, revokedAt)]);
    process.stdout.write(`revoked key last accepted (ms after the revocation was sent): first ${onFirst.toFixed(0)}, second ${onSecond.toFixed(0)}\n`);
    expect(onSecond).toBeLessThan(REVOCATION_BOUND_MS);
    expect(onFirst).toBeLessThan(REVOCATION_BOUND_MS);
    const refused = await call(second, 'GET', '/v1/providers', key);
    expect(refused.body).toMatchObject({ error: { type: 'invalid_key' } });
    // Revoking again keeps the first revocation.
    const again = await admin(second, 'DELETE', `/${id}`);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
  });

  it('expires at its expiry time', async () => {
    const { key } = await createKey({ tenant: 't-1', expires: '2s' });
    expect((await call(second, 'GET', '/v1/providers', key)).status).toBe(200);
    const since = performance.now();
    const accepted = await acceptedFor(second, key, since);
    expect(accepted).toBeLessThan(2000 + REVOCATION_BOUND_MS);
  });

  it('leaves the shared API token working as before', async () => {
    expect((await call(first, 'GET', '/v1/providers', API_TOKEN)).status).toBe(200);
    expect((await chat(first, API_TOKEN)).status).toBe(200);
  });
});
