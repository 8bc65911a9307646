/**
 * Who administers which tenant under api.auth: jwt (issue 27): a JWT holding one of governance.admin_roles
 * administers its own tenant's keys, usage and budgets, and gets 403 for another tenant's; a JWT holding one of
 * governance.operator_roles administers every tenant; without admin_roles no role administers at all.
 */
import { createHmac } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestApps } from './support/test-apps';

const SECRET = 'governance-tenancy-secret-0123456789abcdef-01';

const base64url = (value: string) => Buffer.from(value).toString('base64url');
function jwt(claims: Record<string, unknown>): string {
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 }))}`;
  return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;
}

const CONFIG = ['version: 1', `auth: { jwt_secret: "${SECRET}" }`, 'api: { auth: jwt }'];
const TENANT_A_ADMIN = jwt({ user_id: 'alice', tenant_id: 'tenant-a', role_ids: ['tenant-admin'] });
const OPERATOR = jwt({ user_id: 'olga', tenant_id: 'tenant-ops', role_ids: ['platform'] });

let apps: TestApps;
let app: NestFastifyApplication;
let unconfigured: NestFastifyApplication;

beforeAll(async () => {
  apps = new TestApps('tollgate-governance-tenancy-', {});
  [app, unconfigured] = await Promise.all([
    apps.build([...CONFIG, 'governance: { admin_roles: [tenant-admin], operator_roles: [platform] }', ''].join('\n')),
    apps.build([...CONFIG, ''].join('\n')),
  ]);
});

afterAll(() => apps.close());

const as = (bearer: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object, on = app) =>
  on.inject({ method, url, headers: { authorization: `Bearer ${bearer}` }, ...(payload ? { payload } : {}) });

describe("a tenant's admin role", () => {
  it("mints, lists and changes its own tenant's keys, and gets 403 minting one for another tenant", async () => {
    const own = await as(TENANT_A_ADMIN, 'POST', '/v1/admin/keys', { tenant: 'tenant-a', name: 'own' });
    expect(own.statusCode).toBe(201);
    const other = await as(TENANT_A_ADMIN, 'POST', '/v1/admin/keys', { tenant: 'tenant-b', name: 'theirs' });
    expect(other.statusCode).toBe(403);
    expect(other.json().error).toEqual({
      type: 'forbidden',
      message: 'tenant: an administrator of tenant tenant-a administers that tenant only; other tenants need an operator role or the admin token.',
    });
    expect((await as(TENANT_A_ADMIN, 'GET', '/v1/admin/keys?tenant=tenant-b')).statusCode).toBe(403);

    const theirs = await as(OPERATOR, 'POST', '/v1/admin/keys', { tenant: 'tenant-b', name: 'theirs' });
    expect(theirs.statusCode).toBe(201);
    const listed = await as(TENANT_A_ADMIN, 'GET', '/v1/admin/keys');
    expect(listed.json().keys.map((key: { tenant: string }) => key.tenant)).toEqual(['tenant-a']);
    // Another tenant's key is as unknown as a missing one: not shown, changed or revoked.
    const id = theirs.json().id as string;
    for (const [method, payload] of [['GET'], ['PATCH', { rpm: 1 }], ['DELETE']] as const) {
      const answer = await as(TENANT_A_ADMIN, method, `/v1/admin/keys/${id}`, payload);
      expect(answer.statusCode).toBe(404);
      expect(answer.json().error.type).toBe('key_not_found');
    }
    expect((await as(OPERATOR, 'GET', `/v1/admin/keys/${id}`)).json()).toMatchObject({ tenant: 'tenant-b', status: 'active', rpm: null });
    expect((await as(TENANT_A_ADMIN, 'PATCH', `/v1/admin/keys/${own.json().id}`, { rpm: 5 })).json()).toMatchObject({ rpm: 5 });
  });

  it("reads its own tenant's usage and gets 403 for another tenant's", async () => {
    expect((await as(TENANT_A_ADMIN, 'GET', '/v1/usage')).json()).toMatchObject({ tenant: 'tenant-a' });
    const other = await as(TENANT_A_ADMIN, 'GET', '/v1/usage?tenant=tenant-b');
    expect(other.statusCode).toBe(403);
    expect(other.json().error.message).toBe('tenant: a caller may only see its own tenant');
    expect((await as(OPERATOR, 'GET', '/v1/usage?tenant=tenant-b')).json()).toMatchObject({ tenant: 'tenant-b' });
    expect((await as(OPERATOR, 'GET', '/v1/usage')).json()).toMatchObject({ tenant: null });
  });

  it("reads its own tenant's rules, and gets 403 setting or deleting any rule, its own tenant's included, which an operator sets", async () => {
    for (const rule of [
      { scope: 'tenant', id: 'tenant-a', usd: 1_000_000, period: 'day' },
      { scope: 'sub_tenant', id: 'tenant-a/north', tokens: 1000, period: 'day' },
      { scope: 'subject', id: 'tenant-a/bob', rpm: 10 },
      { scope: 'tenant', id: 'tenant-b', usd: 0, period: 'day' },
      { scope: 'tenant', id: '*', usd: 0, period: 'day' },
      { scope: 'key', id: '3f9a0c1b2d4e', rpm: 0 },
    ]) {
      const refused = await as(TENANT_A_ADMIN, 'PUT', '/v1/admin/budgets', rule);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error.message).toContain('are set by an operator');
    }
    expect((await as(OPERATOR, 'PUT', '/v1/admin/budgets', { scope: 'tenant', id: 'tenant-a', usd: 5, period: 'day' })).statusCode).toBe(200);
    expect((await as(OPERATOR, 'PUT', '/v1/admin/budgets', { scope: 'subject', id: 'tenant-a/bob', rpm: 10 })).statusCode).toBe(200);
    expect((await as(OPERATOR, 'PUT', '/v1/admin/budgets', { scope: 'tenant', id: 'tenant-b', usd: 1, period: 'day' })).statusCode).toBe(200);
    // The operator's ceiling on tenant-a cannot be deleted by tenant-a's administrator.
    expect((await as(TENANT_A_ADMIN, 'DELETE', '/v1/admin/budgets?scope=tenant&id=tenant-a')).statusCode).toBe(403);

    const seen = (await as(TENANT_A_ADMIN, 'GET', '/v1/admin/budgets')).json().runtime;
    expect(seen.budgets.map((rule: { id: string }) => rule.id)).toEqual(['tenant-a']);
    expect(seen.limits).toEqual([{ scope: 'subject', id: 'tenant-a/bob', rpm: 10 }]);
    expect((await as(OPERATOR, 'GET', '/v1/admin/budgets')).json().runtime.budgets).toContainEqual({ scope: 'tenant', id: 'tenant-b', period: 'day', usd: 1 });
  });

  it('administers nothing without a tenant claim', async () => {
    const tenantless = jwt({ user_id: 'nobody', role_ids: ['tenant-admin'] });
    expect((await as(tenantless, 'GET', '/v1/admin/keys')).statusCode).toBe(403);
  });
});

describe('without governance.admin_roles', () => {
  it('gives no role, admin included, the admin routes', async () => {
    const admin = jwt({ user_id: 'root', tenant_id: 'tenant-a', role_ids: ['admin'] });
    for (const [method, url, payload] of [
      ['POST', '/v1/admin/keys', { tenant: 'tenant-a', name: 'x' }],
      ['GET', '/v1/admin/keys'],
      ['PUT', '/v1/admin/budgets', { scope: 'tenant', id: 'tenant-a', usd: 0, period: 'day' }],
    ] as const) {
      const answer = await as(admin, method, url, payload, unconfigured);
      expect(answer.statusCode).toBe(403);
      expect(answer.json().error.type).toBe('forbidden');
    }
  });
});
