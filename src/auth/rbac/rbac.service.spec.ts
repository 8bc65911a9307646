import { Logger } from '@nestjs/common';
import type { AuthRequest } from '../auth-module-options.interface';
import { DEFAULT_RBAC_RECORD_KEY, PERMISSIONS_NAMESPACE, RBAC_NAMESPACE } from '../auth.constants';
import { createCacheStore, type CacheStoreHandle } from '../stores/cache-store.factory';
import { RbacService } from './rbac.service';
import { RbacRecordTooLargeError } from './record-size';

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

/** Issue 16: a record over rbacRecordMaxBytes is refused, and a process keeps enforcing the one it has. */
describe('RbacService record size limit', () => {
  const LIMIT = 2048;
  let rbacStore: CacheStoreHandle;
  let permissionsStore: CacheStoreHandle;
  let errors: jest.SpyInstance;
  beforeEach(() => {
    rbacStore = createCacheStore({ setting: 'memory', namespace: RBAC_NAMESPACE, optionName: 'rbacCacheStore' });
    permissionsStore = createCacheStore({ setting: 'memory', namespace: PERMISSIONS_NAMESPACE, optionName: 'permissionsCacheStore' });
    errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    errors.mockRestore();
    await rbacStore.close();
    await permissionsStore.close();
  });

  const service = (rbacRecordMaxBytes?: number) =>
    new RbacService({ rbacRecordRefreshMs: 0, rbacRecordMaxBytes }, rbacStore.cache, permissionsStore.cache);
  const request = (path: string): AuthRequest => ({ url: path, method: 'GET', headers: { host: 'h.example.com' } });
  const sales = Object.freeze({ payload: {}, userId: 5, pathnameSlugs: [], roleIds: Object.freeze(['sales']) as string[] });
  const decide = async (rbac: RbacService, path: string) => rbac.authorize(sales, request(path));
  /** Grants `sales` the reports, not the invoices (the small record grants the opposite); over `bytes` long. */
  const oversized = (bytes: number) => ({
    last_update: Math.floor(Date.now() / 1000),
    // Each padding entry takes at least 16 bytes ("padding/0:get",).
    permissions: { sales: ['reports:get'], padding: Array.from({ length: Math.ceil(bytes / 16) }, (_, index) => `padding/${index}:get`) },
  });
  const small = { permissions: { sales: ['sales/invoices:get'] } };
  const refusals = () => errors.mock.calls.filter(([message]) => String(message).startsWith('RBAC record refused')).length;

  it('setRecord refuses a larger record with its size and the limit, and leaves the stored one in force', async () => {
    const rbac = service(LIMIT);
    await rbac.setRecord(small);
    const refused = rbac.setRecord(oversized(LIMIT));
    await expect(refused).rejects.toBeInstanceOf(RbacRecordTooLargeError);
    await expect(refused).rejects.toThrow(/^the RBAC record is \d{4} bytes as JSON, more than rbac_record_max_bytes \(2048\)$/);
    expect((await rbac.getRecord())?.permissions).toEqual(small.permissions);
    expect(await decide(rbac, '/api/v1/acme/sales/invoices')).toMatchObject({ allowed: true });
    expect(await decide(rbac, '/api/v1/acme/reports')).toMatchObject({ allowed: false });
  });

  it('keeps enforcing the previous record while a larger one sits in the store, logs once, and says so to readiness', async () => {
    const rbac = service(LIMIT);
    await rbac.setRecord(small);
    await rbacStore.cache.set(DEFAULT_RBAC_RECORD_KEY, oversized(LIMIT), 0);
    const recordReads = jest.spyOn(rbacStore.cache.stores[0], 'get');
    for (let refresh = 0; refresh < 3; refresh++) {
      expect(await decide(rbac, '/api/v1/acme/sales/invoices')).toMatchObject({ allowed: true });
      expect(await decide(rbac, '/api/v1/acme/reports')).toMatchObject({ allowed: false });
    }
    expect(refusals()).toBe(1);
    expect(errors.mock.calls.flat().join('\n')).toMatch(/still enforcing .*more than rbac_record_max_bytes \(2048\)/);
    // Refused once, then not read again on every refresh: the store client would parse all of it each time.
    expect(recordReads.mock.calls.filter(([key]) => String(key).endsWith(DEFAULT_RBAC_RECORD_KEY))).toHaveLength(1);
    expect(await rbac.checkStore()).toEqual({ ready: true, rbacStore: 'up', permissionsStore: 'up', record: 'too_large' });

    // A process that never had a record cannot enforce one: it denies, and is not ready.
    const fresh = service(LIMIT);
    expect(await decide(fresh, '/api/v1/acme/sales/invoices')).toEqual({
      allowed: false,
      code: 'rbac_unavailable',
      detail: expect.stringContaining('more than rbac_record_max_bytes (2048)'),
    });
    expect(await fresh.checkStore()).toMatchObject({ ready: false, record: 'too_large' });
  });

  it('takes a record within the limit set through setRecord at once, and one written straight into the store within 10 s', async () => {
    const rbac = service(LIMIT);
    await rbac.setRecord(small);
    await rbacStore.cache.set(DEFAULT_RBAC_RECORD_KEY, oversized(LIMIT), 0);
    expect(await decide(rbac, '/api/v1/acme/reports')).toMatchObject({ allowed: false });

    // Another process (the CLI) loads a record: its new generation token brings it in on the next refresh.
    await service(LIMIT).setRecord({ permissions: { sales: ['reports:get'] } });
    expect(await decide(rbac, '/api/v1/acme/reports')).toMatchObject({ allowed: true });

    await rbacStore.cache.set(DEFAULT_RBAC_RECORD_KEY, oversized(LIMIT), 0);
    expect(await decide(rbac, '/api/v1/acme/reports')).toMatchObject({ allowed: true });
    await rbacStore.cache.set(DEFAULT_RBAC_RECORD_KEY, { last_update: 1, ...small }, 0);
    expect(await decide(rbac, '/api/v1/acme/sales/invoices')).toMatchObject({ allowed: false });
    const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + 10_000);
    try {
      expect(await decide(rbac, '/api/v1/acme/sales/invoices')).toMatchObject({ allowed: true });
    } finally {
      clock.mockRestore();
    }
    // Each episode of refusal is logged once.
    expect(refusals()).toBe(2);
  });

  it('processes enforcing different earlier records do not clear the shared cache in turn, nor use each other\'s grants', async () => {
    const reportsReader = { last_update: 100, permissions: { sales: ['reports:get'] } };
    const invoicesReader = { last_update: 200, permissions: { sales: ['sales/invoices:get'] } };
    const first = service(LIMIT);
    await first.setRecord(reportsReader);
    expect(await decide(first, '/api/v1/acme/reports')).toMatchObject({ allowed: true });
    // Written straight into the store: the second process reads it, the first still enforces its own.
    await rbacStore.cache.set(DEFAULT_RBAC_RECORD_KEY, invoicesReader, 0);
    const second = service(LIMIT);
    expect(await decide(second, '/api/v1/acme/sales/invoices')).toMatchObject({ allowed: true });
    await rbacStore.cache.set(DEFAULT_RBAC_RECORD_KEY, oversized(LIMIT), 0);

    const generationWrites = jest.spyOn(permissionsStore.cache, 'set');
    for (let round = 0; round < 4; round++) {
      expect([round, await decide(first, '/api/v1/acme/reports')]).toEqual([round, { allowed: true, cached: false }]);
      expect([round, await decide(second, '/api/v1/acme/reports')]).toMatchObject([round, { allowed: false }]);
      expect([round, await decide(second, '/api/v1/acme/sales/invoices')]).toEqual([round, { allowed: true, cached: false }]);
      expect([round, await decide(first, '/api/v1/acme/sales/invoices')]).toMatchObject([round, { allowed: false }]);
    }
    // Each cleared it on every refresh before: eight generation writes in these rounds at least.
    expect(generationWrites.mock.calls.filter(([key]) => String(key).startsWith('generation:'))).toEqual([]);
  });

  it('refuses a 13 MB record on refresh at little more than the cost of reading it from the store', async () => {
    const large = oversized(13 * 1024 * 1024);
    // The fastest of three runs: a GC pause or a busy core delays one run, not all of them.
    const addedMs: number[] = [];
    for (let run = 0; run < 3; run++) {
      const rbac = service();
      await rbac.setRecord(small);
      await rbacStore.cache.set(DEFAULT_RBAC_RECORD_KEY, large, 0);
      let started = performance.now();
      await rbacStore.cache.get(DEFAULT_RBAC_RECORD_KEY);
      const readMs = performance.now() - started;
      started = performance.now();
      expect(await decide(rbac, '/api/v1/acme/sales/invoices')).toMatchObject({ allowed: true });
      addedMs.push(performance.now() - started - readMs);
    }
    // Serialising, parsing and compiling it added about a second; refusing it counts only the first MiB.
    expect(Math.min(...addedMs)).toBeLessThan(300);
  });
});
