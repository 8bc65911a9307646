import { PERMISSIONS_NAMESPACE } from '../auth.constants';
import { createCacheStore, type CacheStoreHandle } from '../stores/cache-store.factory';
import {
  generationTokenKey,
  PermissionCache,
  classifyEntry,
  generationKey,
  grantScope,
  newGeneration,
  parseGeneration,
  permissionEntryKey,
  type GrantIdentity,
} from './permission-cache';

describe('grantScope', () => {
  const identity = (overrides: Partial<GrantIdentity> = {}): GrantIdentity => ({
    userId: 99,
    tenantId: 't-1',
    roleIds: ['admin'],
    ...overrides,
  });

  it('is <user_id>:<digest> and differs with the roles, the tenant, the subdomain claim and the user', () => {
    const base = grantScope(identity());
    expect(base).toMatch(/^99:[A-Za-z0-9_-]{22}$/);
    const others = [
      identity({ roleIds: ['nobody'] }),
      identity({ roleIds: ['admin', 'nobody'] }),
      identity({ roleIds: [] }),
      identity({ tenantId: 't-2' }),
      identity({ tenantId: undefined }),
      identity({ tenantId: 99 }),
      identity({ subdomain: 'acme' }),
      identity({ userId: '99' }),
      identity({ userId: 100 }),
    ].map(grantScope);
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
  });

  it('ignores the order and repeats of roles', () => {
    expect(grantScope(identity({ roleIds: ['sales', 'admin', 'sales'] }))).toBe(grantScope(identity({ roleIds: ['admin', 'sales'] })));
  });

  it('keeps parts apart whatever characters they hold', () => {
    expect(grantScope(identity({ roleIds: ['a,b'] }))).not.toBe(grantScope(identity({ roleIds: ['a', 'b'] })));
    expect(grantScope(identity({ roleIds: ['a","b'] }))).not.toBe(grantScope(identity({ roleIds: ['a', 'b'] })));
    expect(grantScope(identity({ tenantId: 't', subdomain: 'x' }))).not.toBe(grantScope(identity({ tenantId: 't","x', subdomain: undefined })));
  });

  it('is computed again for a context that is not frozen, so a change of its roles is seen', () => {
    const mutable = identity();
    const before = grantScope(mutable);
    mutable.roleIds = ['nobody'];
    expect(grantScope(mutable)).not.toBe(before);
    const frozen = Object.freeze({ ...identity(), roleIds: Object.freeze(['admin']) as string[] });
    expect(grantScope(frozen)).toBe(before);
  });
});

describe('permissionEntryKey / generationKey', () => {
  it('keeps the host apart from the path: a Host holding a slash cannot name another path', () => {
    const forged = permissionEntryKey('42:digest', 'acme.example.com/admin', '/users', 'GET');
    expect(forged).not.toBe(permissionEntryKey('42:digest', 'acme.example.com', '/admin/users', 'GET'));
    expect(permissionEntryKey('42:digest', 'acme.example.com%2Fadmin', '/users', 'GET')).not.toBe(
      permissionEntryKey('42:digest', 'acme.example.com', '/admin/users', 'GET'),
    );
  });

  it('is <scope>:<host>/<path>:<method>', () => {
    expect(permissionEntryKey('42:digest', 'acme.example.com', '/api/v1/acme/sales', 'GET')).toBe(
      '42:digest:acme.example.com/api/v1/acme/sales:get',
    );
  });

  it('prefixes the generation and hashes keys memcached would refuse', () => {
    expect(generationKey('g1', '1:h/p:get')).toBe('g1:1:h/p:get');
    const long = generationKey('g1', `1:h/${'x'.repeat(300)}:get`);
    expect(long).toMatch(/^g1:sha256:[A-Za-z0-9_-]{43}$/);
    expect(generationKey('g1', '1:h/a b:get')).toMatch(/^g1:sha256:/);
    expect(generationKey('g1', '1:h/a b:get')).not.toBe(generationKey('g1', '1:h/a  b:get'));
  });
});

describe('classifyEntry (seed section 3)', () => {
  const ttl = 1800;
  const now = 1_000_000;
  it.each([
    [undefined, 0, 'absent'],
    [null, 0, 'absent'],
    ['garbage', 0, 'stale'],
    [now - 10, 0, 'valid'],
    [now - ttl, 0, 'expired'],
    [now - ttl - 1, 0, 'expired'],
    [now - 10, now - 5, 'stale'],
    [now - 10, now - 10, 'valid'],
  ])('cachedAt %p with last_update %p -> %s', (cachedAt, lastUpdate, state) => {
    expect(classifyEntry(cachedAt, now, ttl, lastUpdate as number)).toBe(state);
  });
});

describe('generation tokens', () => {
  it('round-trip and reject anything else', () => {
    const generation = newGeneration(1234, 56);
    expect(parseGeneration(generation.id)).toEqual(generation);
    const beforeAnyRecord = newGeneration(1234, -1);
    expect(parseGeneration(beforeAnyRecord.id)).toEqual(beforeAnyRecord);
    expect(parseGeneration('0')).toBeUndefined();
    expect(parseGeneration(7)).toBeUndefined();
    expect(parseGeneration('12-3-has space')).toBeUndefined();
  });
});

describe('PermissionCache on the memory store', () => {
  let store: CacheStoreHandle;
  beforeEach(() => {
    store = createCacheStore({ setting: 'memory', namespace: PERMISSIONS_NAMESPACE, optionName: 'permissionsCacheStore' });
  });
  afterEach(() => store.close());

  it('starts a generation for the first record seen and shares it', async () => {
    const a = new PermissionCache(store.cache, 60);
    await a.loadGeneration();
    expect(a.currentGeneration).toBeUndefined();
    expect(await a.observeLastUpdate(100, 5000)).toBe(true);
    expect(a.currentGeneration).toMatchObject({ clearedAtMs: 5000, coveredUpdate: 100 });
    expect(await store.cache.get(generationTokenKey('permissions'))).toBe(a.currentGeneration?.id);
    const b = new PermissionCache(store.cache, 60);
    await b.loadGeneration();
    expect(await b.observeLastUpdate(100, 9000)).toBe(false);
    expect(b.currentGeneration).toEqual(a.currentGeneration);
  });

  it('replaces an unparsable stored generation', async () => {
    await store.cache.set(generationTokenKey('permissions'), 'not-a-generation!', 0);
    const cache = new PermissionCache(store.cache, 60);
    await cache.loadGeneration();
    expect(await cache.observeLastUpdate(100, 7000)).toBe(true);
    expect(cache.currentGeneration?.clearedAtMs).toBe(7000);
  });

  it('caches grants, hits, and deletes expired or stale entries', async () => {
    const cache = new PermissionCache(store.cache, 60);
    await cache.observeLastUpdate(900);
    await cache.remember('1:h/p:get', 1000);
    expect(await cache.peek('1:h/p:get')).toBe(1000);
    expect(await cache.lookup('1:h/p:get', 900, 1030)).toBe(true);
    // Stale: the record changed after the entry was cached; the entry is removed.
    expect(await cache.lookup('1:h/p:get', 1001, 1030)).toBe(false);
    expect(await cache.peek('1:h/p:get')).toBeUndefined();
    // Expired by age even though the store still holds it.
    await cache.remember('1:h/p:get', 1000);
    expect(await cache.lookup('1:h/p:get', 900, 1060)).toBe(false);
    expect(await cache.peek('1:h/p:get')).toBeUndefined();
  });

  it('clears once per change of last_update, for every process sharing the store', async () => {
    const cache = new PermissionCache(store.cache, 1800);
    const nowMs = Date.now();
    // Same second as the generation's creation: still detected as a change.
    const lastUpdate = Math.floor(nowMs / 1000);
    expect(await cache.observeLastUpdate(lastUpdate - 60, nowMs)).toBe(true);
    expect(await cache.observeLastUpdate(lastUpdate, nowMs)).toBe(true);
    const afterClear = cache.currentGeneration;
    expect(await cache.observeLastUpdate(lastUpdate, nowMs + 1000)).toBe(false);
    expect(cache.currentGeneration).toBe(afterClear);
    // A second process seeing the same update after the first one cleared does not clear again.
    const other = new PermissionCache(store.cache, 1800);
    await other.loadGeneration();
    expect(await other.observeLastUpdate(lastUpdate, nowMs + 2000)).toBe(false);
  });

  it.each([
    ['older, within the TTL', -60],
    ['older, beyond the TTL', -7200],
  ])('clears for a record whose last_update is %s, and drops the grants of the previous one', async (_name, shift) => {
    const cache = new PermissionCache(store.cache, 1800);
    const nowMs = Date.now();
    const now = Math.floor(nowMs / 1000);
    await cache.observeLastUpdate(now - 10, nowMs);
    await cache.remember('1:s:h/p:get', now, nowMs);
    expect(await cache.lookup('1:s:h/p:get', now - 10, now, nowMs)).toBe(true);

    const other = new PermissionCache(store.cache, 1800);
    await other.loadGeneration();
    expect(await other.observeLastUpdate(now + shift, nowMs)).toBe(true);
    expect(await other.lookup('1:s:h/p:get', now + shift, now, nowMs)).toBe(false);
    // The first process, on its next read of record and token, finds the grant gone too.
    await cache.loadGeneration();
    expect(await cache.observeLastUpdate(now + shift, nowMs)).toBe(false);
    expect(await cache.lookup('1:s:h/p:get', now + shift, now, nowMs)).toBe(false);
  });

  it('loses its generation, and so every grant, when the stored token is gone', async () => {
    const cache = new PermissionCache(store.cache, 60);
    const now = Math.floor(Date.now() / 1000);
    await cache.observeLastUpdate(now);
    await cache.remember('1:s:h/p:get', now);
    await store.cache.del(generationTokenKey('permissions'));
    await cache.loadGeneration();
    expect(await cache.lookup('1:s:h/p:get', now, now)).toBe(false);
    expect(await cache.observeLastUpdate(now)).toBe(true);
    expect(await cache.lookup('1:s:h/p:get', now, now)).toBe(false);
  });

  it('reuses a grant from process memory within localMs, and never with a TTL of 0', async () => {
    const cache = new PermissionCache(store.cache, 60, { localMs: 1000 });
    await cache.observeLastUpdate(0);
    const nowMs = Date.now();
    const now = Math.floor(nowMs / 1000);
    await cache.remember('2:h/p:get', now, nowMs);
    await store.cache.clear();
    expect(await cache.lookup('2:h/p:get', 0, now, nowMs + 999)).toBe(true);
    expect(await cache.lookup('2:h/p:get', 0, now, nowMs + 1000)).toBe(false);

    const disabled = new PermissionCache(store.cache, 0, { localMs: 1000 });
    await disabled.observeLastUpdate(0);
    await disabled.remember('3:h/p:get', now);
    expect(await disabled.peek('3:h/p:get')).toBeUndefined();
  });
});
