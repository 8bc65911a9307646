import type { AuthContext } from '../auth/request-context';
import { stateForAuthContext } from './governance-state';

describe('stateForAuthContext', () => {
  const context = (overrides: Partial<AuthContext>): AuthContext => ({ payload: {}, userId: 42, pathnameSlugs: [], roleIds: [], ...overrides });
  const admins = new Set(['admin', 'ops']);

  it('takes tenant, subject and roles from the claims, and admin from the configured roles', () => {
    expect(stateForAuthContext(context({ tenantId: 7, roleIds: ['viewer', 'ops'], pathnameSlugs: ['north'] }), admins)).toEqual({
      identity: { tenant: '7', subTenant: 'north', subject: '42', subjectKind: 'user', roles: ['viewer', 'ops'] },
      admin: true,
    });
  });

  it('binds no sub-tenant when the token grants several slugs, and no tenant without a tenant claim', () => {
    const state = stateForAuthContext(context({ pathnameSlugs: ['north', 'south'], roleIds: ['viewer'] }), admins);
    expect(state.identity).toMatchObject({ tenant: null, subTenant: null });
    expect(state.admin).toBe(false);
  });
});
