/**
 * Hostile input on the real server application (AppModule on Fastify, requests injected): JSON bodies
 * nested beyond MAX_JSON_DEPTH on every JSON surface (/v1, /openai/v1, MCP over HTTP), each refused in its
 * own error shape before validation, and JWS headers the JWT guard must refuse (`crit`, `alg: none`).
 */
import { createHmac } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { MAX_JSON_DEPTH } from '../src/server/json-body-parser';
import { TestApps } from './support/test-apps';

const JWT_SECRET = 'h'.repeat(48);
const DEPTH_MESSAGE = `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`;
/** Nothing listens on the discard port: a request that passed validation ends as a connection error. */
const PROVIDERS = 'providers:\n  openai: { api_key: sk-hostile-input, url: "http://127.0.0.1:9" }\n';

let apps: TestApps;
let open: NestFastifyApplication;
let guarded: NestFastifyApplication;

beforeAll(async () => {
  apps = new TestApps('tollgate-hostile-input-', {});
  [open, guarded] = await Promise.all([
    apps.build(`version: 1\napi: { auth: none }\nai: { retry_attempts: 0, enable_fallback: false }\n${PROVIDERS}mcp: { enabled: true, auth: none }\n`),
    apps.build(`version: 1\napi: { auth: jwt }\nauth: { jwt_secret: "${JWT_SECRET}" }\n${PROVIDERS}`),
  ]);
});

afterAll(() => apps.close());

/** `levels` arrays inside one another around `inner`. */
const nested = (levels: number, inner = '') => '['.repeat(levels) + inner + ']'.repeat(levels);
/** Objects `{"a": …}` inside one another around `inner`. */
const nestedObjects = (levels: number, inner = '1') => '{"a":'.repeat(levels) + inner + '}'.repeat(levels);

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await open.inject({
    method: 'POST',
    url,
    payload: body,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  });
  return { status: response.statusCode, body: response.body.length > 0 ? JSON.parse(response.body.replace(/^event: message\ndata: /, '')) : undefined };
}

describe(`JSON bodies nested deeper than ${MAX_JSON_DEPTH} levels are refused before validation`, () => {
  /** A /v1/generate body nested exactly `depth` levels: the root, the context list, then objects. */
  const generateBody = (depth: number) => `{"prompt":"hi","context":[${nestedObjects(depth - 2)}]}`;

  it.each([20_000, MAX_JSON_DEPTH + 1])('/v1/generate, %i levels: 400 json_too_deep in the envelope', async (depth) => {
    const response = await post('/v1/generate', generateBody(depth));
    expect(response).toEqual({ status: 400, body: { error: { type: 'json_too_deep', message: DEPTH_MESSAGE }, request_id: expect.any(String) } });
  });

  it(`/v1/generate, ${MAX_JSON_DEPTH} levels: validated and sent on (the unreachable provider answers 503)`, async () => {
    const response = await post('/v1/generate', generateBody(MAX_JSON_DEPTH));
    expect(response).toMatchObject({ status: 503, body: { error: { type: 'connection_error' } } });
  });

  /** A chat completion made `depth` levels deep by a parameter the surface does not take (so validation names it). */
  const chatBody = (depth: number) => `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"metadata":${nested(depth - 1)}}`;

  it.each([20_000, MAX_JSON_DEPTH + 1])('/openai/v1/chat/completions, %i levels: 400 in OpenAI\'s error shape', async (depth) => {
    const response = await post('/openai/v1/chat/completions', chatBody(depth));
    expect(response).toEqual({
      status: 400,
      body: { error: { message: DEPTH_MESSAGE, type: 'invalid_request_error', param: null, code: 'json_too_deep' } },
    });
  });

  it(`/openai/v1/chat/completions, ${MAX_JSON_DEPTH} levels: reaches validation, which names the parameter`, async () => {
    const response = await post('/openai/v1/chat/completions', chatBody(MAX_JSON_DEPTH));
    expect(response).toMatchObject({ status: 400, body: { error: { param: 'metadata', code: 'unknown_parameter' } } });
  });

  /** An MCP initialize request whose client info carries a value that makes the body `depth` levels deep. */
  const initializeBody = (depth: number) =>
    `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"${LATEST_PROTOCOL_VERSION}","capabilities":{},"clientInfo":{"name":"deep","version":"1","extra":${nested(depth - 3)}}}}`;

  it.each([20_000, MAX_JSON_DEPTH + 1])('MCP over HTTP, %i levels: 400 as a JSON-RPC error', async (depth) => {
    const response = await post('/mcp', initializeBody(depth));
    expect(response).toEqual({ status: 400, body: { jsonrpc: '2.0', error: { code: -32000, message: DEPTH_MESSAGE }, id: null } });
  });

  it(`MCP over HTTP, ${MAX_JSON_DEPTH} levels: the session opens`, async () => {
    const response = await post('/mcp', initializeBody(MAX_JSON_DEPTH));
    expect(response).toMatchObject({ status: 200, body: { jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'tollgate' } } } });
  });

  it('MCP over HTTP: a body that is not JSON is a JSON-RPC parse error (-32700)', async () => {
    const response = await post('/mcp', '{"jsonrpc":');
    expect(response).toEqual({ status: 400, body: { jsonrpc: '2.0', error: { code: -32700, message: 'The request body is not valid JSON.' }, id: null } });
  });

  it('MCP over HTTP: a body over server.body_limit is a JSON-RPC error with status 413', async () => {
    const response = await post('/mcp', `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(1024 * 1024)}"}}`);
    expect(response).toEqual({ status: 413, body: { jsonrpc: '2.0', error: { code: -32000, message: 'The request body exceeds the size limit.' }, id: null } });
  });

  it.each([
    ['a form', 'prompt=hi', 'application/x-www-form-urlencoded'],
    ['plain text', '{"prompt":"hi"}', 'text/plain'],
    ['plain text with a charset', 'hi', 'text/plain; charset=utf-8'],
  ])('only application/json bodies are parsed: %s is 415, as the envelope\'s message says', async (_, body, contentType) => {
    const response = await post('/v1/generate', body, { 'content-type': contentType });
    expect(response).toMatchObject({ status: 415, body: { error: { type: 'unsupported_media_type', message: 'Request bodies must be application/json.' } } });
  });
});

describe('the JWT guard refuses JWS headers it must not trust', () => {
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = () => ({ user_id: 7, exp: Math.floor(Date.now() / 1000) + 600 });
  const signed = (header: object) => {
    const input = `${b64(header)}.${b64(claims())}`;
    return `${input}.${createHmac('sha256', JWT_SECRET).update(input).digest('base64url')}`;
  };

  async function version(token: string) {
    const response = await guarded.inject({ method: 'GET', url: '/v1/version', headers: { authorization: `Bearer ${token}` } });
    return { status: response.statusCode, code: JSON.parse(response.body).code, challenge: response.headers['www-authenticate'] };
  }

  it('a correctly signed token passes (the control)', async () => {
    expect((await version(signed({ alg: 'HS256', typ: 'JWT' }))).status).toBe(200);
  });

  it('a crit header naming an extension Tollgate does not understand: 401 malformed_token, every time', async () => {
    const token = signed({ alg: 'HS256', typ: 'JWT', crit: ['exp'], exp: claims().exp });
    const refused = { status: 401, code: 'malformed_token', challenge: 'Bearer error="invalid_token"' };
    expect(await version(token)).toEqual(refused);
    expect(await version(token)).toEqual(refused);
  });

  it('alg none, with or without a signature: 401 invalid_algorithm', async () => {
    const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`;
    expect(await version(unsigned)).toMatchObject({ status: 401, code: 'invalid_algorithm' });
    expect(await version(signed({ alg: 'none', typ: 'JWT' }))).toMatchObject({ status: 401, code: 'invalid_algorithm' });
  });
});
