import type { AuthRequest } from '../auth-module-options.interface';
import { RbacService } from './rbac.service';

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
