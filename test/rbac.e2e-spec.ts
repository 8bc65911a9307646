import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { CacheModule, CACHE_MANAGER } from '@nestjs/cache-manager';
import {
  All,
  Controller,
  Get,
  Logger,
  Module,
  SetMetadata,
  type DynamicModule,
} from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { Cache } from 'cache-manager';
import { Pool } from 'pg';
import type { AuthModuleOptions, CacheStoreOptions, CacheStoreSetting } from '../src/auth/auth-module-options.interface';
import { AuthModule } from '../src/auth/auth.module';
import { PERMISSIONS_STORE, RBAC_STORE, SKIP_AUTH_KEY } from '../src/auth/auth.constants';
import { generationKey, generationTokenKey, grantScope, permissionEntryKey } from '../src/auth/rbac/permission-cache';
import { RbacService } from '../src/auth/rbac/rbac.service';

/**
 * RBAC over HTTP through the real AuthModule (docs/auth.md) for every store kind, on the real servers.
 * Isolation on shared servers: a record key unique to this run (the permission-cache generation is
 * scoped by it) and a Postgres table of its own.
 */
const REDIS_URL = process.env.TOLLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MEMCACHED = process.env.TOLLGATE_TEST_MEMCACHED ?? '127.0.0.1:11211';
const POSTGRES_URL = process.env.TOLLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_TABLE = `tollgate_rbac_e2e_${process.pid}`;
const RUN = `${process.pid}-${Date.now().toString(36)}`;
const SECRET = 'rbac-e2e-secret-that-is-long-enough-for-hs256!!';
const HOST = 'acme.example.com';
const TTL = 60;
const REFRESH_MS = 150;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nowSeconds = () => Math.floor(Date.now() / 1000);

function sign(payload: Record<string, unknown>): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ exp: nowSeconds() + 600, ...payload })}`;
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function record(lastUpdate = nowSeconds() - 3600): Record<string, unknown> {
  return {
    last_update: lastUpdate,
    permissions: {
      '1': ['sales/invoices:get', 'sales/invoices:POST'],
      '2': ['reports:*'],
      '3': ['sales/*:*'],
      // A regex holding ':' (non-capturing group); the method is after the LAST ':'.
      '4': ['%r{orders/(?:\\d+)}:get'],
      admin: ['*:*'],
      '5': [42, 'broken', '%r{(}:get', 'admin/users:get'],
      '6': 'not-an-array',
      '7': ['*:get'],
    },
  };
}

@Controller()
class RoutesController {
  @All('api/v1/:slug/sales/invoices')
  invoices() {
    return { ok: true };
  }

  @Get('api/v1/:slug/sales/invoices/:id')
  invoice() {
    return { ok: true };
  }

  @All('api/v1/:slug/reports')
  reports() {
    return { ok: true };
  }

  @Get('api/v1/:slug/orders/:id')
  order() {
    return { ok: true };
  }

  @Get('api/v1/:slug/admin/users')
  users() {
    return { ok: true };
  }

  @Get('public')
  @SetMetadata(SKIP_AUTH_KEY, true)
  publicRoute() {
    return { ok: true };
  }
}

interface StoreConfig {
  rbacCacheStore?: CacheStoreSetting;
  rbacCacheStoreOptions?: CacheStoreOptions;
  permissionsCacheStore?: CacheStoreSetting;
  permissionsCacheStoreOptions?: CacheStoreOptions;
}

interface Harness {
  app: NestFastifyApplication;
  rbac: RbacService;
  permissionsStore: Cache;
  recordKey: string;
  request(path: string, token?: string, method?: 'GET' | 'POST' | 'PUT' | 'DELETE'): Promise<{ status: number; body: any }>;
  /** Where the grant of a token without tenant claims, for the current generation, is stored. */
  entryKey(userId: number, roleIds: string[], path: string, method?: string): Promise<string>;
  close(): Promise<void>;
}

let harnessCount = 0;

async function boot(
  config: StoreConfig,
  imports: DynamicModule[] = [],
  overrides: Partial<AuthModuleOptions> = { rbacRecordRefreshMs: REFRESH_MS },
): Promise<Harness> {
  harnessCount += 1;
  const recordKey = `rbac-e2e-${RUN}-${harnessCount}`;
  const options = { jwtSecret: SECRET, ...config, rbacRecordKey: recordKey, cachedPermissionsTtl: TTL, ...overrides };
  @Module({ imports: [...imports, AuthModule.forRoot({ ...options, rbacEnabled: true })], controllers: [RoutesController] })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  const rbac = app.get(RbacService);
  const permissionsStore = app.get<Cache>(PERMISSIONS_STORE);
  return {
    app,
    rbac,
    permissionsStore,
    recordKey,
    async request(path, token, method = 'GET') {
      const response = await app.inject({
        method,
        url: path,
        headers: { host: HOST, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
      return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
    },
    async entryKey(userId, roleIds, path, method = 'get') {
      const generation = await permissionsStore.get<string>(generationTokenKey(recordKey));
      return generationKey(String(generation), permissionEntryKey(grantScope({ userId, roleIds }), HOST, path, method));
    },
    async close() {
      await app.get<Cache>(RBAC_STORE).del(recordKey);
      await permissionsStore.del(generationTokenKey(recordKey));
      await app.close();
    },
  };
}

const storeConfigs: Array<[string, StoreConfig]> = [
  ['memory', { rbacCacheStore: 'memory', permissionsCacheStore: 'memory' }],
  [
    'redis',
    {
      rbacCacheStore: 'redis',
      rbacCacheStoreOptions: { url: REDIS_URL },
      permissionsCacheStore: 'redis',
      permissionsCacheStoreOptions: { url: REDIS_URL },
    },
  ],
  [
    'memcached',
    {
      rbacCacheStore: 'memcached',
      rbacCacheStoreOptions: { servers: [MEMCACHED] },
      permissionsCacheStore: 'memcached',
      permissionsCacheStoreOptions: { servers: [MEMCACHED] },
    },
  ],
  [
    'postgres',
    {
      rbacCacheStore: 'postgres',
      rbacCacheStoreOptions: { url: POSTGRES_URL, table: PG_TABLE },
      permissionsCacheStore: 'postgres',
      permissionsCacheStoreOptions: { url: POSTGRES_URL, table: PG_TABLE },
    },
  ],
  [
    'redis record + memory permissions',
    { rbacCacheStore: 'redis', rbacCacheStoreOptions: { url: REDIS_URL }, permissionsCacheStore: 'memory' },
  ],
];

afterAll(async () => {
  const pool = new Pool({ connectionString: POSTGRES_URL });
  await pool.query(`DROP TABLE IF EXISTS ${PG_TABLE}`);
  await pool.end();
});

describe.each(storeConfigs)('RBAC over HTTP with %s stores', (kind, config) => {
  let h: Harness;
  const shared = config.rbacCacheStore !== 'memory';

  beforeAll(async () => {
    h = await boot(config);
  });
  afterAll(() => h.close());

  it('denies every request while no record is stored (fail closed)', async () => {
    const response = await h.request('/api/v1/acme/reports', sign({ user_id: 1, role_ids: ['admin'] }));
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ error: 'Access denied', status: 403, code: 'rbac_unavailable' });
  });

  it('loads a record, skipping malformed entries with warnings', async () => {
    const result = await h.rbac.setRecord(record());
    expect(result.warnings).toHaveLength(4);
    expect(result.roles).toBe(7);
    const stored = await h.rbac.getRecord();
    expect(stored?.permissions['5']).toEqual(['broken', '%r{(}:get', 'admin/users:get']);
    expect(stored?.permissions['6']).toBeUndefined();
  });

  it.each([
    ['literal, numeric role ids', { role_ids: [1] }, 'GET', '/api/v1/acme/sales/invoices'],
    ['literal, method in upper case in the record', { role_ids: [1] }, 'POST', '/api/v1/acme/sales/invoices'],
    ['reports:* with a single-string role claim', { role_ids: '2' }, 'PUT', '/api/v1/acme/reports'],
    ['prefix/*:* via the fallback claim roles', { roles: ['3'] }, 'GET', '/api/v1/acme/sales/invoices/9'],
    ['prefix/*:* covers the prefix itself', { roles: ['3'] }, 'DELETE', '/api/v1/acme/sales/invoices'],
    ['regex with a colon inside, fallback claim user_roles', { user_roles: [4] }, 'GET', '/api/v1/acme/orders/12'],
    ['*:* via the fallback claim role', { role: 'admin' }, 'DELETE', '/api/v1/acme/reports'],
    ['*:get', { role_ids: [7] }, 'GET', '/api/v1/acme/admin/users'],
    ['the valid entry of a role with malformed ones', { role_ids: [5] }, 'GET', '/api/v1/acme/admin/users'],
    ['a query string is ignored', { role_ids: [1] }, 'GET', '/api/v1/acme/sales/invoices?page=2'],
  ])('grants: %s', async (_name, claims, method, path) => {
    const response = await h.request(path, sign({ user_id: 100, ...claims }), method as 'GET');
    expect(response.status).toBe(200);
  });

  it.each([
    ['a method the role lacks', { role_ids: [1] }, 'DELETE', '/api/v1/acme/sales/invoices'],
    ['a path the role lacks', { role_ids: [1] }, 'GET', '/api/v1/acme/reports'],
    ['a literal does not cover sub-paths', { role_ids: [1] }, 'GET', '/api/v1/acme/sales/invoices/9'],
    ['a regex must match the whole path', { user_roles: [4] }, 'GET', '/api/v1/acme/orders/12x'],
    ['*:get does not allow POST', { role_ids: [7] }, 'POST', '/api/v1/acme/reports'],
    ['a role whose entry is not an array', { role_ids: [6] }, 'GET', '/api/v1/acme/reports'],
    ['an unknown role', { role_ids: [99] }, 'GET', '/api/v1/acme/reports'],
    ['no role claim at all', {}, 'GET', '/api/v1/acme/reports'],
    ['an empty role list', { role_ids: [] }, 'GET', '/api/v1/acme/reports'],
  ])('denies: %s', async (_name, claims, method, path) => {
    const response = await h.request(path, sign({ user_id: 101, ...claims }), method as 'GET');
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: 'Access denied', status: 403, code: 'rbac_denied' });
  });

  it('lets @SkipAuth routes through and answers 401 when no auth context was set', async () => {
    expect((await h.request('/public')).status).toBe(200);
    const response = await h.request('/api/v1/acme/reports');
    expect(response.status).toBe(401);
  });

  describe('permission cache states (docs/auth.md)', () => {
    const path = '/api/v1/acme/reports';

    it('absent -> cached: a grant is stored with the current time; a denial is not', async () => {
      const before = nowSeconds();
      expect((await h.request(path, sign({ user_id: 200, role_ids: ['2'] }))).status).toBe(200);
      const cachedAt = await h.permissionsStore.get<number>(await h.entryKey(200, ['2'], path));
      expect(cachedAt).toBeGreaterThanOrEqual(before);
      expect((await h.request(path, sign({ user_id: 201, role_ids: ['1'] }))).status).toBe(403);
      expect(await h.permissionsStore.get(await h.entryKey(201, ['1'], path))).toBeUndefined();
    });

    it('cached -> cached: a valid entry authorizes without evaluating the record', async () => {
      // Role 1 lacks `reports`; only the cached entry can grant this request.
      await h.permissionsStore.set(await h.entryKey(202, ['1'], path), nowSeconds(), TTL * 1000);
      expect((await h.request(path, sign({ user_id: 202, role_ids: ['1'] }))).status).toBe(200);
    });

    it('cached -> absent: an entry older than the TTL is removed and the request re-evaluated', async () => {
      const key = await h.entryKey(203, ['1'], path);
      await h.permissionsStore.set(key, nowSeconds() - TTL - 5, TTL * 1000);
      expect((await h.request(path, sign({ user_id: 203, role_ids: ['1'] }))).status).toBe(403);
      expect(await h.permissionsStore.get(key)).toBeUndefined();

      const granted = await h.entryKey(204, ['2'], path);
      await h.permissionsStore.set(granted, nowSeconds() - TTL - 5, TTL * 1000);
      expect((await h.request(path, sign({ user_id: 204, role_ids: ['2'] }))).status).toBe(200);
      expect(await h.permissionsStore.get<number>(granted)).toBeGreaterThanOrEqual(nowSeconds() - 1);
    });

    it('a last_update within the TTL clears the whole cache, once; earlier entries are stale', async () => {
      expect((await h.request(path, sign({ user_id: 205, role_ids: ['2'] }))).status).toBe(200);
      expect((await h.request('/api/v1/acme/sales/invoices', sign({ user_id: 206, role_ids: [1] }))).status).toBe(200);
      const generationBefore = await h.permissionsStore.get<string>(generationTokenKey(h.recordKey));

      // Another system rewrites the record in place (no setRecord, so nothing clears the cache for it):
      // role 2 loses `reports`.
      const updated = record(nowSeconds());
      (updated.permissions as Record<string, unknown>)['2'] = ['sales/invoices:get'];
      await h.app.get<Cache>(RBAC_STORE).set(h.recordKey, updated, 0);
      await sleep(REFRESH_MS + 50);

      expect((await h.request(path, sign({ user_id: 205, role_ids: ['2'] }))).status).toBe(403);
      const generationAfter = await h.permissionsStore.get<string>(generationTokenKey(h.recordKey));
      expect(generationAfter).not.toBe(generationBefore);
      // All users' entries went with it.
      expect(await h.permissionsStore.get(await h.entryKey(206, ['1'], '/api/v1/acme/sales/invoices'))).toBeUndefined();

      // Further requests and refreshes with the same last_update do not clear again.
      expect((await h.request('/api/v1/acme/sales/invoices', sign({ user_id: 206, role_ids: [1] }))).status).toBe(200);
      await sleep(REFRESH_MS + 50);
      expect((await h.request('/api/v1/acme/sales/invoices', sign({ user_id: 206, role_ids: [1] }))).status).toBe(200);
      expect(await h.permissionsStore.get(generationTokenKey(h.recordKey))).toBe(generationAfter);
      expect(await h.permissionsStore.get(await h.entryKey(206, ['1'], '/api/v1/acme/sales/invoices'))).toBeDefined();
    });

    it('clearPermissionCache() removes every cached grant', async () => {
      await h.rbac.setRecord(record());
      expect((await h.request(path, sign({ user_id: 207, role_ids: ['2'] }))).status).toBe(200);
      const key = await h.entryKey(207, ['2'], path);
      expect(await h.permissionsStore.get(key)).toBeDefined();
      await h.rbac.clearPermissionCache();
      expect(await h.permissionsStore.get(await h.entryKey(207, ['2'], path))).toBeUndefined();
    });
  });

  describe('grant cache keyed by tenant and roles (issue 16)', () => {
    const issueRecord = (lastUpdate: number) => ({ last_update: lastUpdate, permissions: { admin: ['*:*'], sales: ['sales/*:get'] } });
    const as = (tenantId: string, roleIds: string[]) => sign({ user_id: 99, tenant_id: tenantId, role_ids: roleIds });
    const invoices = '/api/v1/acme/sales/invoices';

    it('denies user 99 once its roles or its tenant no longer grant, in both orders', async () => {
      await h.rbac.setRecord(issueRecord(nowSeconds()));
      expect((await h.request(invoices, as('t-1', ['admin']))).status).toBe(200);
      expect((await h.request(invoices, as('t-1', ['nobody']))).status).toBe(403);
      expect((await h.request(invoices, as('t-2', ['nobody']))).status).toBe(403);

      await h.rbac.setRecord(issueRecord(nowSeconds() + 1));
      expect((await h.request(invoices, as('t-2', ['admin']))).status).toBe(200);
      expect((await h.request(invoices, as('t-1', ['nobody']))).status).toBe(403);
      expect((await h.request(invoices, as('t-2', ['nobody']))).status).toBe(403);
      expect((await h.request(invoices, as('t-2', ['admin']))).status).toBe(200);
    });

    it('drops grants when another system writes a record with an older last_update', async () => {
      const now = nowSeconds();
      await h.rbac.setRecord(issueRecord(now));
      expect((await h.request(invoices, as('t-1', ['sales']))).status).toBe(200);
      expect((await h.request(invoices, as('t-1', ['sales']))).status).toBe(200);

      const restored = issueRecord(now - 2 * TTL);
      restored.permissions.sales = [];
      await h.app.get<Cache>(RBAC_STORE).set(h.recordKey, restored, 0);
      await sleep(REFRESH_MS + 50);
      expect((await h.request(invoices, as('t-1', ['sales']))).status).toBe(403);
      expect((await h.request(invoices, as('t-1', ['admin']))).status).toBe(200);
    });
  });

  it('reports the stores as ready', async () => {
    await h.rbac.setRecord(record());
    expect(await h.rbac.checkStore()).toEqual({ ready: true, rbacStore: 'up', permissionsStore: 'up', record: 'ok' });
  });

  if (!shared) return;
  it('enforces a record set through another instance within the refresh interval', async () => {
    await h.rbac.setRecord(record());
    const token = sign({ user_id: 300, role_ids: ['2'] });
    expect((await h.request('/api/v1/acme/reports', token)).status).toBe(200);

    const other = RbacService.create({ ...config, rbacRecordKey: h.recordKey, cachedPermissionsTtl: TTL });
    const revoked = record(nowSeconds());
    (revoked.permissions as Record<string, unknown>)['2'] = [];
    await other.setRecord(revoked);
    await other.close();

    await sleep(REFRESH_MS + 50);
    expect((await h.request('/api/v1/acme/reports', token)).status).toBe(403);
  });
});

describe('RBAC with the default refresh interval', () => {
  const config: StoreConfig = {
    rbacCacheStore: 'redis',
    rbacCacheStoreOptions: { url: REDIS_URL },
    permissionsCacheStore: 'redis',
    permissionsCacheStoreOptions: { url: REDIS_URL },
  };
  let h: Harness;
  beforeAll(async () => {
    h = await boot(config, [], {});
  });
  afterAll(() => h.close());

  it('enforces a record written by another instance within 1 s', async () => {
    await h.rbac.setRecord(record());
    const token = sign({ user_id: 600, role_ids: ['2'] });
    expect((await h.request('/api/v1/acme/reports', token)).status).toBe(200);
    const other = RbacService.create({ ...config, rbacRecordKey: h.recordKey, cachedPermissionsTtl: TTL });
    const revoked = record(nowSeconds());
    (revoked.permissions as Record<string, unknown>)['2'] = [];
    await other.setRecord(revoked);
    await other.close();
    await sleep(1000);
    expect((await h.request('/api/v1/acme/reports', token)).status).toBe(403);
  });
});

describe('RBAC store connections', () => {
  it('are closed when the application shuts down', async () => {
    const h = await boot({
      rbacCacheStore: 'redis',
      rbacCacheStoreOptions: { url: REDIS_URL },
      permissionsCacheStore: 'postgres',
      permissionsCacheStoreOptions: { url: POSTGRES_URL, table: PG_TABLE },
    });
    await h.rbac.setRecord(record());
    expect((await h.request('/api/v1/acme/reports', sign({ user_id: 700, role_ids: ['2'] }))).status).toBe(200);
    const redis = (h.app.get<Cache>(RBAC_STORE).stores[0].store as { client: { isOpen: boolean } }).client;
    const pool = (h.permissionsStore.stores[0].store as unknown as { pool: Pool }).pool;
    expect(redis.isOpen).toBe(true);
    expect(pool.totalCount).toBeGreaterThan(0);
    await h.close();
    expect(redis.isOpen).toBe(false);
    expect(pool.ended).toBe(true);
  });
});

describe('RBAC with the host application cache', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await boot({}, [CacheModule.register({ isGlobal: true })]);
  });
  afterAll(() => h.close());

  it('uses the host CACHE_MANAGER for both stores when none is configured', async () => {
    await h.rbac.setRecord(record());
    const host = h.app.get<Cache>(CACHE_MANAGER);
    expect(await host.get(`tollgate:rbac:${h.recordKey}`)).toMatchObject({ permissions: { '2': ['reports:*'] } });
    expect((await h.request('/api/v1/acme/reports', sign({ user_id: 400, role_ids: ['2'] }))).status).toBe(200);
    const generation = await host.get<string>(`tollgate:perm:${generationTokenKey(h.recordKey)}`);
    const entry = permissionEntryKey(grantScope({ userId: 400, roleIds: ['2'] }), HOST, '/api/v1/acme/reports', 'get');
    expect(await host.get(`tollgate:perm:${generation}:${entry}`)).toBeDefined();
  });
});

describe('RBAC with an unreachable store', () => {
  let h: Harness;
  let errors: jest.SpyInstance;
  beforeAll(async () => {
    errors = jest.spyOn(Logger.prototype, 'error');
    const port = await closedPort();
    h = await boot({
      rbacCacheStore: 'redis',
      rbacCacheStoreOptions: { url: `redis://127.0.0.1:${port}` },
      permissionsCacheStore: 'memory',
    });
  });
  afterAll(async () => {
    errors.mockRestore();
    await h.app.close();
  });

  it('denies with 403 rbac_unavailable, logs an error and keeps serving', async () => {
    const token = sign({ user_id: 500, role_ids: ['admin'] });
    const started = Date.now();
    const responses = await Promise.all([1, 2, 3].map(() => h.request('/api/v1/acme/reports', token)));
    expect(responses.map((r) => r.status)).toEqual([403, 403, 403]);
    expect(responses[0].body).toMatchObject({ code: 'rbac_unavailable' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('RBAC record unavailable'));
    expect(errors.mock.calls.flat().join(' ')).not.toContain(SECRET);
    expect((await h.request('/public')).status).toBe(200);
    expect(await h.rbac.checkStore()).toMatchObject({ ready: false, rbacStore: 'down' });
    await expect(h.rbac.setRecord(record())).rejects.toBeDefined();
  });
});

describe('RBAC record size limit on Redis', () => {
  const LIMIT = 4096;
  const config: StoreConfig = {
    rbacCacheStore: 'redis',
    rbacCacheStoreOptions: { url: REDIS_URL },
    permissionsCacheStore: 'redis',
    permissionsCacheStoreOptions: { url: REDIS_URL },
  };
  /** `record()` with role 2 losing `reports`, padded past the limit. */
  const oversized = () => {
    const padded = record(nowSeconds());
    const permissions = padded.permissions as Record<string, unknown>;
    permissions['2'] = [];
    permissions.padding = Array.from({ length: LIMIT / 16 }, (_, index) => `padding/${index}:get`);
    return padded;
  };
  let h: Harness;
  beforeAll(async () => {
    h = await boot(config, [], { rbacRecordRefreshMs: REFRESH_MS, rbacRecordMaxBytes: LIMIT });
  });
  afterAll(() => h.close());

  it('setRecord refuses a larger record; one written straight into Redis leaves the previous record in force', async () => {
    await h.rbac.setRecord(record());
    await expect(h.rbac.setRecord(oversized())).rejects.toThrow(/^the RBAC record is \d+ bytes as JSON, more than rbac_record_max_bytes \(4096\)$/);
    const reports = sign({ user_id: 800, role_ids: ['2'] });
    expect((await h.request('/api/v1/acme/reports', reports)).status).toBe(200);

    await h.app.get<Cache>(RBAC_STORE).set(h.recordKey, oversized(), 0);
    for (let refresh = 0; refresh < 3; refresh++) {
      await sleep(REFRESH_MS + 50);
      expect((await h.request('/api/v1/acme/reports', reports)).status).toBe(200);
      expect((await h.request('/api/v1/acme/reports', sign({ user_id: 801, role_ids: ['1'] }))).status).toBe(403);
    }
    expect(await h.rbac.checkStore()).toEqual({ ready: true, rbacStore: 'up', permissionsStore: 'up', record: 'too_large' });
  });
});
