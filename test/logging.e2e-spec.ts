/**
 * The server's JSON logs (pino, on the real application): every line written while a request runs
 * carries its request id, Nest Logger calls included, and no credential (Authorization, cookies, API keys,
 * tokens in headers, query strings or bodies) ever reaches a line.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '../src/config/config.loader';
import { createHttpApp } from '../src/server/http-server';

const JWT_SECRET = 'l'.repeat(48);
const API_TOKEN = 'api-token-for-logging';
let work: string;
let app: NestFastifyApplication | undefined;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'tollgate-logging-'));
});

afterAll(async () => {
  await app?.close();
  rmSync(work, { recursive: true, force: true });
});

const base64url = (value: string) => Buffer.from(value).toString('base64url');
function signHs256(payload: Record<string, unknown>): string {
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(payload))}`;
  return `${head}.${createHmac('sha256', JWT_SECRET).update(head).digest('base64url')}`;
}
const tokenFor = (roles: string[]) =>
  signHs256({ user_id: 7, tenant_id: 't-1', role_ids: roles, exp: Math.floor(Date.now() / 1000) + 600 });

describe('JSON logs', () => {
  const SECRETS = {
    bearer: 'bearer-secret-4471',
    cookie: 'cookie-secret-5582',
    apiKey: 'apikey-secret-6693',
    queryKey: 'query-secret-7704',
    geminiQueryKey: 'gemini-query-secret-9926',
    bodyToken: 'body-secret-8815',
    jwt: tokenFor(['admin']),
  };

  it('binds every line of a request to its request id and never writes a credential', async () => {
    const lines: string[] = [];
    const destination = { write: (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)) };
    const file = join(work, 'config.yaml');
    writeFileSync(file, 'version: 1\nauth: { debug_mode: true }\n');
    const config = loadConfig({ cwd: work, configPath: file, env: { JWT_SECRET, API_TOKEN } });
    // No level given: auth.debug_mode makes it debug, so the guard's decision lines are written.
    app = await createHttpApp(config, { destination });
    await app.init();
    lines.length = 0;

    const requests = [
      { method: 'GET' as const, url: '/auth/context', headers: { 'x-request-id': 'obs-req-1', authorization: `Bearer ${SECRETS.jwt}`, cookie: `session=${SECRETS.cookie}` } },
      { method: 'GET' as const, url: '/auth/context', headers: { 'x-request-id': 'obs-req-2', authorization: `Bearer ${SECRETS.bearer}` } },
      {
        method: 'POST' as const,
        url: `/v1/embeddings?api_key=${SECRETS.queryKey}`,
        headers: { 'x-request-id': 'obs-req-3', 'x-api-key': SECRETS.apiKey, 'content-type': 'application/json' },
        payload: JSON.stringify({ input: 'hello', token: SECRETS.bodyToken, api_key: SECRETS.apiKey }),
      },
      // Gemini's routes take the key in ?key= (Google's API does).
      { method: 'GET' as const, url: `/gemini/v1beta/models?key=${SECRETS.geminiQueryKey}`, headers: { 'x-request-id': 'obs-req-4' } },
    ];
    for (const request of requests) await app!.inject(request);

    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const secret of Object.values(SECRETS)) expect(lines.join('\n')).not.toContain(secret);
    for (const id of ['obs-req-1', 'obs-req-2', 'obs-req-3', 'obs-req-4']) {
      const mine = parsed.filter((line) => line.request_id === id);
      expect(mine.find((line) => (line.req as { path?: string } | undefined)?.path !== undefined)).toBeDefined();
    }
    // Every line written while the requests ran belongs to one of them.
    expect(parsed.every((line) => typeof line.request_id === 'string' && String(line.request_id).startsWith('obs-req-'))).toBe(true);
    // The guard's own decision log (a Nest Logger call) carries the id of its request.
    const denial = parsed.find((line) => String(line.msg).includes('malformed_token'));
    expect(denial).toMatchObject({ request_id: 'obs-req-2', context: 'JwtTenantGuard' });
    const completed = parsed.find((line) => line.request_id === 'obs-req-1' && line.res !== undefined) as {
      req: { headers: Record<string, string>; path: string };
      res: { status: number };
    };
    expect(completed.req.headers.authorization).toBe('[redacted]');
    expect(completed.req.headers.cookie).toBe('[redacted]');
    expect(completed.req.path).toBe('/auth/context');
    expect(completed.res.status).toBe(200);
  });
});
