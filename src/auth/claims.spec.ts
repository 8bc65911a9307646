import { extractClaims, normalizeRoles, roleClaim } from './claims';

const MAPPING = { userId: 'user_id', tenantId: 'tenant_id', subdomain: 'subdomain', pathnameSlugs: 'pathname_slugs', roleIds: 'role_ids' };
const NONE = { tenantId: false, subdomain: false, pathnameSlugs: false };

describe('extractClaims', () => {
  it('fills every context field whose claim is present, whatever is validated', () => {
    const payload = { user_id: 7, tenant_id: 't-1', subdomain: 'acme', pathname_slugs: 'north', role_ids: [1, 'admin'] };
    expect(extractClaims(payload, MAPPING, NONE)).toEqual({
      ok: true,
      context: { payload, userId: 7, tenantId: 't-1', subdomain: 'acme', pathnameSlugs: ['north'], roleIds: ['1', 'admin'] },
    });
  });

  it('reads renamed claims through the mapping', () => {
    const mapping = { ...MAPPING, userId: 'sub', roleIds: 'user_roles' };
    const result = extractClaims({ sub: 'u-1', user_roles: 'editor' }, mapping, NONE);
    expect(result).toMatchObject({ ok: true, context: { userId: 'u-1', roleIds: ['editor'], pathnameSlugs: [] } });
  });

  it.each([
    [{}, 'the token has no "user_id" claim'],
    [{ user_id: '' }, 'the token has no "user_id" claim'],
    [{ user_id: null }, 'the token has no "user_id" claim'],
    [{ user_id: { id: 1 } }, 'the "user_id" claim must be a string or a number'],
    [{ user_id: 1, tenant_id: [1] }, 'the "tenant_id" claim must be a string or a number'],
    [{ user_id: 1, subdomain: 5 }, 'the "subdomain" claim must be a string'],
    [{ user_id: 1, pathname_slugs: ['a', 2] }, 'the "pathname_slugs" claim must be a string or an array of strings'],
    [{ user_id: 1, role_ids: [{}] }, 'the "role_ids" claim must be a string, an integer or an array of them'],
    [{ user_id: 1, roles: [1.5] }, 'the "roles" claim must be a string, an integer or an array of them'],
  ])('refuses %j', (payload, detail) => {
    expect(extractClaims(payload, MAPPING, NONE)).toEqual({ ok: false, detail });
  });

  it('requires the claims an enabled check needs', () => {
    const all = { tenantId: true, subdomain: true, pathnameSlugs: true };
    expect(extractClaims({ user_id: 1 }, MAPPING, { ...NONE, tenantId: true })).toMatchObject({ detail: 'the token has no "tenant_id" claim' });
    expect(extractClaims({ user_id: 1 }, MAPPING, { ...NONE, subdomain: true })).toMatchObject({ detail: 'the token has no "subdomain" claim' });
    expect(extractClaims({ user_id: 1, pathname_slugs: null }, MAPPING, { ...NONE, pathnameSlugs: true })).toMatchObject({
      detail: 'the token has no "pathname_slugs" claim',
    });
    expect(extractClaims({ user_id: 1, tenant_id: 0, subdomain: 'a', pathname_slugs: [] }, MAPPING, all).ok).toBe(true);
  });
});

describe('role extraction', () => {
  it('uses the mapped claim, then roles, role, user_roles, role_ids', () => {
    expect(roleClaim({ role_ids: ['a'], roles: ['b'] }, 'role_ids')).toEqual({ name: 'role_ids', value: ['a'] });
    expect(roleClaim({ roles: ['b'], role: 'c' }, 'groups')).toEqual({ name: 'roles', value: ['b'] });
    expect(roleClaim({ role: 'c', user_roles: ['d'] }, 'groups')).toEqual({ name: 'role', value: 'c' });
    expect(roleClaim({ user_roles: ['d'], role_ids: [1] }, 'groups')).toEqual({ name: 'user_roles', value: ['d'] });
    expect(roleClaim({ role_ids: [1] }, 'groups')).toEqual({ name: 'role_ids', value: [1] });
    expect(roleClaim({ roles: '' }, 'groups')).toBeUndefined();
  });

  it('stringifies every accepted form', () => {
    expect(normalizeRoles(['a', 2])).toEqual(['a', '2']);
    expect(normalizeRoles(3)).toEqual(['3']);
    expect(normalizeRoles('admin')).toEqual(['admin']);
    expect(normalizeRoles([true])).toBeUndefined();
  });
});
