import type { AuthRequest } from '../auth-module-options.interface';
import { PERMISSIONS_NAMESPACE, RBAC_NAMESPACE } from '../auth.constants';
import { createCacheStore, type CacheStoreHandle } from '../stores/cache-store.factory';
import { DEFAULT_RBAC_RECORD_KEY, RbacService } from './rbac.service';

/** The service on real memory stores, built the way the CLI builds it. */
describe('RbacService (standalone, memory stores)', () => {
  let rbac: RbacService;
  beforeEach(() => {
    rbac = RbacService.create({ rbacCacheStore: 'memory', permissionsCacheStore: 'memory' });
  });
  afterEach(() => rbac.close());

  const request = (url: string, method = 'GET'): AuthRequest => ({ url, method, headers: { host: 'h.example.com' } });
  const context = (roleIds: string[]) => ({ payload: {}, userId: 1, pathnameSlugs: [], roleIds });

  it('has no record until one is set; readiness says so', async () => {
    expect(await rbac.getRecord()).toBeUndefined();
    expect(await rbac.checkStore()).toEqual({ ready: false, rbacStore: 'up', permissionsStore: 'up', record: 'missing' });
  });

  it.each([
    ['{not json', /not valid JSON/],
    ['[1]', /not an object/],
    [{ last_update: 'yesterday', permissions: {} }, /last_update/],
    [{ permissions: [] }, /no permissions object/],
  ])('refuses the invalid record %p', async (input, message) => {
    await expect(rbac.setRecord(input)).rejects.toThrow(message);
  });

  it('fills a missing last_update with the current time and accepts a JSON string', async () => {
    const before = Math.floor(Date.now() / 1000);
    const result = await rbac.setRecord('{"permissions":{"1":["reports:get","bad"]}}');
    expect(result.lastUpdate).toBeGreaterThanOrEqual(before);
    expect(result).toMatchObject({ roles: 1, permissions: 2, warnings: [expect.stringContaining('bad')] });
    expect((await rbac.getRecord())?.permissions).toEqual({ '1': ['reports:get', 'bad'] });
  });

  it('authorizes, caches the grant, and denies dot segments and missing roles', async () => {
    await rbac.setRecord({ last_update: 1, permissions: { '1': ['reports/*:get'] } });
    expect(await rbac.authorize(context(['1']), request('/api/v1/acme/reports/x'))).toEqual({ allowed: true, cached: false });
    expect(await rbac.authorize(context(['1']), request('/api/v1/acme/reports/x?y=1'))).toEqual({ allowed: true, cached: true });
    expect(await rbac.authorize(context(['1']), request('/api/v1/acme/reports/../admin'))).toMatchObject({
      allowed: false,
      code: 'rbac_denied',
    });
    expect(await rbac.authorize(context([]), request('/api/v1/acme/reports/x'))).toMatchObject({
      allowed: false,
      detail: 'the token carries no roles',
    });
  });

  it('answers a warm grant synchronously and a cold one through the store', async () => {
    await rbac.setRecord({ last_update: 1, permissions: { '1': ['reports/*:get'] } });
    const cold = rbac.authorize(context(['1']), request('/api/v1/acme/reports/x'));
    expect(cold).toBeInstanceOf(Promise);
    expect(await cold).toEqual({ allowed: true, cached: false });
    expect(rbac.authorize(context(['1']), request('/api/v1/acme/reports/x'))).toEqual({ allowed: true, cached: true });
    expect(rbac.authorize(context(['1']), request('/api/v1/acme/reports/y'))).toBeInstanceOf(Promise);
  });
});

/**
 * Issue 16: a cached grant is keyed by everything the decision depends on, and any change of the record's
 * last_update drops the grants computed under the previous one. Two services on the same stores stand for
 * two processes.
 */
describe('RbacService grant cache (two services on shared memory stores)', () => {
  const ISSUE_RECORD = { admin: ['*:*'], sales: ['sales/*:get'] };
  let rbacStore: CacheStoreHandle;
  let permissionsStore: CacheStoreHandle;
  beforeEach(() => {
    rbacStore = createCacheStore({ setting: 'memory', namespace: RBAC_NAMESPACE, optionName: 'rbacCacheStore' });
    permissionsStore = createCacheStore({ setting: 'memory', namespace: PERMISSIONS_NAMESPACE, optionName: 'permissionsCacheStore' });
  });
  afterEach(async () => {
    await rbacStore.close();
    await permissionsStore.close();
  });

  const service = (rbacRecordRefreshMs: number) => new RbacService({ rbacRecordRefreshMs }, rbacStore.cache, permissionsStore.cache);
  const request = (path = '/api/v1/acme/sales/invoices'): AuthRequest => ({ url: path, method: 'GET', headers: { host: 'h.example.com' } });
  /** Frozen, like the contexts the JWT guard shares between the requests of one token. */
  const token = (tenantId: string, roleIds: string[], subdomain?: string) =>
    Object.freeze({ payload: {}, userId: 99, tenantId, subdomain, pathnameSlugs: [], roleIds: Object.freeze([...roleIds]) as string[] });
  const allowed = async (rbac: RbacService, context: ReturnType<typeof token>) => (await rbac.authorize(context, request())).allowed;

  it.each([
    ['in one process, from its memory', [0, 0], 1000],
    ['in one process, through the store', [0, 0], 0],
    ['across two processes', [0, 1], 0],
  ])('denies a role set or tenant the grant was not computed for: %s', async (_name, [first, second], refreshMs) => {
    const services = [service(refreshMs), service(refreshMs)];
    await services[0].setRecord({ permissions: ISSUE_RECORD });
    expect(await allowed(services[first], token('t-1', ['admin']))).toBe(true);
    expect(await allowed(services[second], token('t-1', ['nobody']))).toBe(false);
    expect(await allowed(services[second], token('t-2', ['nobody']))).toBe(false);

    // The other order: the grant is cached under tenant t-2 first.
    expect(await allowed(services[second], token('t-2', ['admin']))).toBe(true);
    expect(await allowed(services[first], token('t-1', ['nobody']))).toBe(false);
    expect(await allowed(services[first], token('t-2', ['nobody']))).toBe(false);
    expect(await allowed(services[first], token('t-2', ['admin'], 'other'))).toBe(true);
    expect(await allowed(services[first], token('t-2', ['sales', 'nobody']))).toBe(true);
  });

  it('shares one grant between tokens with the same roles in another order', async () => {
    const rbac = service(0);
    await rbac.setRecord({ permissions: ISSUE_RECORD });
    expect(await rbac.authorize(token('t-1', ['sales', 'admin']), request())).toEqual({ allowed: true, cached: false });
    expect(await rbac.authorize(token('t-1', ['admin', 'sales', 'admin']), request())).toEqual({ allowed: true, cached: true });
  });

  it.each([
    ['newer', 60],
    ['older, within the TTL', -60],
    ['older, beyond the TTL', -7200],
  ])('drops cached grants when another system writes a record whose last_update is %s', async (_name, shift) => {
    const now = Math.floor(Date.now() / 1000);
    const rbac = service(0);
    await rbac.setRecord({ last_update: now - 10, permissions: ISSUE_RECORD });
    const sales = token('t-1', ['sales']);
    expect(await allowed(rbac, sales)).toBe(true);
    expect(await rbac.authorize(sales, request())).toEqual({ allowed: true, cached: true });

    // Written straight into the store, as an external system or a restore would: nobody clears the cache for it.
    await rbacStore.cache.set(DEFAULT_RBAC_RECORD_KEY, { last_update: now + shift, permissions: { ...ISSUE_RECORD, sales: [] } }, 0);
    expect(await allowed(rbac, sales)).toBe(false);
    expect(await allowed(service(0), sales)).toBe(false);
  });
});
