import type { AuthContext } from '../auth/request-context';
import { stateForAuthContext, stateForKey } from './governance-state';

describe('stateForAuthContext', () => {
  const context = (overrides: Partial<AuthContext>): AuthContext => ({ payload: {}, userId: 42, pathnameSlugs: [], roleIds: [], ...overrides });
  const roles = { admin: new Set(['admin', 'ops']), operator: new Set(['platform']) };

  it('takes tenant, subject and roles from the claims, and admin from the configured roles', () => {
    expect(stateForAuthContext(context({ tenantId: 7, roleIds: ['viewer', 'ops'], pathnameSlugs: ['north'] }), roles)).toEqual({
      identity: { tenant: '7', subTenant: 'north', subject: '42', subjectKind: 'user', roles: ['viewer', 'ops'] },
      admin: true,
      operator: false,
    });
  });

  it('binds no sub-tenant when the token grants several slugs, and no tenant without a tenant claim', () => {
    const state = stateForAuthContext(context({ pathnameSlugs: ['north', 'south'], roleIds: ['viewer'] }), roles);
    expect(state.identity).toMatchObject({ tenant: null, subTenant: null });
    expect(state.admin).toBe(false);
  });

  it('makes an admin role administer its own tenant only, none without a tenant, and an operator role every tenant', () => {
    expect(stateForAuthContext(context({ tenantId: 't-1', roleIds: ['admin'] }), roles)).toMatchObject({ admin: true, operator: false });
    expect(stateForAuthContext(context({ roleIds: ['admin'] }), roles)).toMatchObject({ admin: false, operator: false });
    expect(stateForAuthContext(context({ roleIds: ['platform'] }), roles)).toMatchObject({ admin: true, operator: true });
    expect(stateForAuthContext(context({ tenantId: 't-1', roleIds: ['admin'] }), { admin: new Set(), operator: new Set() }).admin).toBe(false);
  });
});

describe('stateForKey', () => {
  it('is frozen throughout, since every request with the key shares it while its lookup is reused', () => {
    const record = { id: 'abcdef012345', name: 'ci', tenant: 't-1', hash: 'h', createdAt: '2026-11-27T00:00:00.000Z' };
    const state = stateForKey(record);
    expect(state.identity).toEqual({ tenant: 't-1', subTenant: null, subject: 'abcdef012345', subjectKind: 'key', keyId: 'abcdef012345', roles: [] });
    for (const part of [state, state.identity, state.identity.roles, state.apiKey]) expect(Object.isFrozen(part)).toBe(true);
    // The store's own record stays its own.
    expect(Object.isFrozen(record)).toBe(false);
  });
});
