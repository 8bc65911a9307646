/**
 * Stored responses under api.auth: jwt with no governance section: the JWT's tenant owns what it stores, so
 * another tenant's caller gets 404 for the id, as under API keys (docs/gateway.md#openai-responses-api).
 */
import { createHmac } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { TestApps } from './support/test-apps';

const SECRET = 'responses-jwt-tenancy-secret-0123456789abcdef';
const UPSTREAM_KEY = 'sk-emulator-responses-jwt';

const base64url = (value: string) => Buffer.from(value).toString('base64url');
function jwt(claims: Record<string, unknown>): string {
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 }))}`;
  return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;
}

let apps: TestApps;
let app: NestFastifyApplication;
let emulator: OpenAiEmulator;

beforeAll(async () => {
  emulator = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY });
  apps = new TestApps('tollgate-responses-jwt-', {});
  app = await apps.build(
    [
      'version: 1',
      `auth: { jwt_secret: "${SECRET}" }`,
      'api: { auth: jwt }',
      'providers:',
      `  openai: { url: "${emulator.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 5 }`,
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await apps.close();
  await emulator.close();
});

const tenantA = jwt({ user_id: 'u-1', tenant_id: 'tenant-a' });
const tenantB = jwt({ user_id: 'u-2', tenant_id: 'tenant-b' });

describe('stored responses owned by the JWT tenant', () => {
  it("answers the tenant that stored a response and 404 to another tenant's caller, for GET, input_items and DELETE, and previous_response_not_found to its previous_response_id", async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/openai/v1/responses',
      headers: { authorization: `Bearer ${tenantA}` },
      payload: { model: 'gpt-test', input: 'remember the pelican' },
    });
    expect(created.statusCode).toBe(200);
    const id = created.json().id as string;

    const get = (token: string, path = '') => app.inject({ method: 'GET', url: `/openai/v1/responses/${id}${path}`, headers: { authorization: `Bearer ${token}` } });
    expect((await get(tenantA)).statusCode).toBe(200);
    expect((await get(tenantB)).statusCode).toBe(404);
    expect((await get(tenantB, '/input_items')).statusCode).toBe(404);
    const continued = await app.inject({
      method: 'POST',
      url: '/openai/v1/responses',
      headers: { authorization: `Bearer ${tenantB}` },
      payload: { model: 'gpt-test', input: 'and then?', previous_response_id: id },
    });
    expect(continued.statusCode).toBe(400);
    expect(continued.json().error).toMatchObject({ code: 'previous_response_not_found', param: 'previous_response_id' });
    expect((await app.inject({ method: 'DELETE', url: `/openai/v1/responses/${id}`, headers: { authorization: `Bearer ${tenantB}` } })).statusCode).toBe(404);
    expect((await get(tenantA)).statusCode).toBe(200);
  });
});
