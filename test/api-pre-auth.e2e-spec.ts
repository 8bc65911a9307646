/**
 * The API credential is checked before the body is read (src/server/api-pre-auth.ts), in process. The bodies
 * here are not JSON: a body that was read and parsed would be 400 invalid_json, one refused before it 401.
 * api.auth token: every /v1 and /openai/v1 request, under a base_path too; api.auth jwt: a body over
 * server.body_limit is read only for a token AuthModule verifies, smaller ones are left to AuthModule's guard;
 * MCP with mcp.auth token answers its endpoint's own 401.
 */
import { createHmac } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestApps } from './support/test-apps';

const SECRET = 'api-pre-auth-jwt-secret-0123456789abcdef-0123';
const API_TOKEN = 'api-pre-auth-token';
const BODY_LIMIT = 4096;
const NOT_JSON = `{"prompt": "${'x'.repeat(3 * BODY_LIMIT)}`;
const SMALL_NOT_JSON = '{"prompt": "x';

const base64url = (value: string) => Buffer.from(value).toString('base64url');
function jwt(claims: Record<string, unknown>, secret = SECRET): string {
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 }))}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

let apps: TestApps;

beforeAll(() => {
  apps = new TestApps('tollgate-api-pre-auth-', {});
});

afterAll(() => apps.close());

function post(app: NestFastifyApplication, url: string, payload: string, bearer?: string) {
  return app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) } });
}

describe('api.auth: token, under a base_path', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await apps.build(['version: 1', `api: { token: "${API_TOKEN}" }`, `server: { body_limit: ${BODY_LIMIT}, base_path: /gw }`, ''].join('\n'));
  });

  it.each(['/gw/v1/generate', '/gw/openai/v1/chat/completions', '/gw/v1/embeddings', '/gw/gemini/v1beta/models/fast:generateContent'])('%s: 401 before the body is parsed, small or large', async (url) => {
    for (const payload of [SMALL_NOT_JSON, NOT_JSON]) {
      const response = await post(app, url, payload, 'not-the-token');
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('keeps the connection after a refused body within the route limit, closes it after a larger one', async () => {
    expect((await post(app, '/gw/v1/generate', NOT_JSON)).headers.connection).not.toBe('close');
    expect((await post(app, '/gw/gemini/v1beta/models/fast:generateContent', NOT_JSON)).headers.connection).not.toBe('close');
    expect((await post(app, '/gw/v1/embeddings', NOT_JSON)).headers.connection).toBe('close');
  });

  it("answers Gemini's routes in Google's error shape, the key taken from ?key= too", async () => {
    const response = await post(app, '/gw/gemini/v1beta/models/fast:generateContent?key=not-the-token', SMALL_NOT_JSON);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: { code: 401, message: expect.any(String), status: 'UNAUTHENTICATED' } });
    const admitted = await post(app, `/gw/gemini/v1beta/models/fast:generateContent?key=${API_TOKEN}`, SMALL_NOT_JSON);
    expect(admitted.statusCode).toBe(400);
    expect(admitted.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
  });

  it('reads and parses the body of an authenticated caller', async () => {
    const response = await post(app, '/gw/v1/generate', SMALL_NOT_JSON, API_TOKEN);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: { type: 'invalid_json' } });
  });

  it('leaves the other routes alone', async () => {
    expect((await post(app, '/gw/healthz', SMALL_NOT_JSON)).statusCode).toBe(400);
  });
});

describe('MCP over HTTP, mcp.auth: token', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await apps.build(['version: 1', `api: { token: "${API_TOKEN}" }`, `mcp: { enabled: true, token: "${API_TOKEN}" }`, `server: { body_limit: ${BODY_LIMIT} }`, ''].join('\n'));
  });

  it("answers the endpoint's own 401 before the body is parsed, and parses the body of the MCP token's holder", async () => {
    const refused = await post(app, '/mcp', SMALL_NOT_JSON, 'not-the-token');
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    // What the endpoint itself answers a parsed request without a valid token.
    const parsed = await post(app, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), 'not-the-token');
    expect(refused.json()).toEqual(parsed.json());
    expect(refused.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'A valid bearer token is required' }, id: null });
    const admitted = await post(app, '/mcp', SMALL_NOT_JSON, API_TOKEN);
    expect(admitted.statusCode).toBe(400);
    expect(admitted.json()).toMatchObject({ error: { code: -32700 } });
  });

  it('leaves a disallowed Origin to the endpoint, which answers 403 first', async () => {
    const response = await app.inject({ method: 'POST', url: '/mcp', payload: '{}', headers: { 'content-type': 'application/json', origin: 'https://elsewhere.example' } });
    expect(response.statusCode).toBe(403);
  });
});

describe('api.auth: jwt', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await apps.build(['version: 1', `auth: { jwt_secret: "${SECRET}" }`, 'api: { auth: jwt }', `server: { body_limit: ${BODY_LIMIT} }`, ''].join('\n'));
  });

  it("refuses a body over body_limit with AuthModule's own 401 before reading it: no token, or one that fails verification", async () => {
    const missing = await post(app, '/v1/generate', NOT_JSON);
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    const forged = await post(app, '/openai/v1/chat/completions', NOT_JSON, jwt({ user_id: 'u-1' }, 'another-secret-0123456789abcdef-0123456789'));
    expect(forged.statusCode).toBe(401);
    expect(forged.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    // The same answer as AuthModule's guard gives a small body it refuses after parsing.
    const small = await post(app, '/v1/generate', '{}');
    expect(missing.json()).toEqual(small.json());
  });

  it('reads a body over body_limit for a verified token, and leaves smaller bodies to the guard after parsing', async () => {
    const verified = await post(app, '/v1/generate', NOT_JSON, jwt({ user_id: 'u-1' }));
    expect(verified.statusCode).toBe(400);
    expect(verified.json()).toMatchObject({ error: { type: 'invalid_json' } });
    expect((await post(app, '/v1/generate', SMALL_NOT_JSON)).statusCode).toBe(400);
  });
});
