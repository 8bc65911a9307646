/**
 * Governance for JWT callers (api.auth: jwt), in process: the admin keys API takes a JWT holding one of
 * governance.admin_roles and refuses other JWTs with 403; the admin token is not a JWT, so AuthModule refuses it.
 */
import { createHmac } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestApps } from './support/test-apps';

const SECRET = 'governance-jwt-secret-0123456789abcdef-0123';
const ADMIN_TOKEN = 'admin-token-for-governance-jwt';

const base64url = (value: string) => Buffer.from(value).toString('base64url');
function jwt(claims: Record<string, unknown>): string {
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 }))}`;
  return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;
}

let apps: TestApps;
let app: NestFastifyApplication;

beforeAll(async () => {
  apps = new TestApps('tollgate-governance-jwt-', {});
  app = await apps.build(
    [
      'version: 1',
      `auth: { jwt_secret: "${SECRET}" }`,
      'api: { auth: jwt }',
      `governance: { admin_token: "${ADMIN_TOKEN}", admin_roles: [ops] }`,
      '',
    ].join('\n'),
  );
});

afterAll(() => apps.close());

const createKey = (bearer: string) =>
  app.inject({ method: 'POST', url: '/v1/admin/keys', headers: { authorization: `Bearer ${bearer}` }, payload: { tenant: 't-1', name: 'from-jwt' } });

describe('the admin keys API under api.auth: jwt', () => {
  it('accepts a JWT with an admin role', async () => {
    const response = await createKey(jwt({ user_id: 'u-1', tenant_id: 't-1', role_ids: ['viewer', 'ops'] }));
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ tenant: 't-1', name: 'from-jwt', key: expect.stringMatching(/^tg_/) });
  });

  it('refuses a JWT without one with 403 forbidden', async () => {
    const response = await createKey(jwt({ user_id: 'u-2', tenant_id: 't-1', role_ids: ['admin'] }));
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ error: { type: 'forbidden', message: 'This operation needs the admin token or an admin role.' } });
  });

  it('leaves the admin token to AuthModule, which refuses a bearer that is not a JWT', async () => {
    expect((await createKey(ADMIN_TOKEN)).statusCode).toBe(401);
  });
});
