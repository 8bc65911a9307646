import { PERMISSIONS_NAMESPACE } from '../auth.constants';
import { createCacheStore, type CacheStoreHandle } from '../stores/cache-store.factory';
import {
  generationTokenKey,
  PermissionCache,
  classifyEntry,
  generationKey,
  lastUpdateRequiresClear,
  newGeneration,
  parseGeneration,
  permissionEntryKey,
} from './permission-cache';

describe('permissionEntryKey / generationKey', () => {
  it('follows the seed shape <user_id>:<host>/<path>:<method>', () => {
    expect(permissionEntryKey(42, 'acme.example.com', '/api/v1/acme/sales', 'GET')).toBe(
      '42:acme.example.com/api/v1/acme/sales:get',
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

describe('lastUpdateRequiresClear', () => {
  const nowMs = 2_000_000_000_000;
  const nowS = nowMs / 1000;
  const generation = (coveredUpdate: number) => ({ id: 'g', clearedAtMs: nowMs, coveredUpdate });
  it('clears for a last_update within the TTL the generation does not reflect', () => {
    expect(lastUpdateRequiresClear(nowS - 60, nowMs, 1800, generation(nowS - 120))).toBe(true);
    expect(lastUpdateRequiresClear(nowS - 60, nowMs, 1800, undefined)).toBe(true);
  });
  it('does not clear again once a generation reflects that last_update, even within the same second', () => {
    expect(lastUpdateRequiresClear(nowS, nowMs + 999, 1800, generation(nowS))).toBe(false);
  });
  it('does not clear for a last_update older than the TTL', () => {
    expect(lastUpdateRequiresClear(nowS - 1800, nowMs, 1800, undefined)).toBe(false);
  });
});

describe('generation tokens', () => {
  it('round-trip and reject anything else', () => {
    const generation = newGeneration(1234, 56);
    expect(parseGeneration(generation.id)).toEqual(generation);
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

  it('creates a generation when none is stored and shares it', async () => {
    const a = new PermissionCache(store.cache, 60);
    await a.loadGeneration(5000);
    expect(a.currentGeneration?.clearedAtMs).toBe(5000);
    expect(await store.cache.get(generationTokenKey('permissions'))).toBe(a.currentGeneration?.id);
    const b = new PermissionCache(store.cache, 60);
    await b.loadGeneration(9000);
    expect(b.currentGeneration).toEqual(a.currentGeneration);
  });

  it('replaces an unparsable stored generation', async () => {
    await store.cache.set(generationTokenKey('permissions'), 'not-a-generation!', 0);
    const cache = new PermissionCache(store.cache, 60);
    await cache.loadGeneration(7000);
    expect(cache.currentGeneration?.clearedAtMs).toBe(7000);
  });

  it('caches grants, hits, and deletes expired or stale entries', async () => {
    const cache = new PermissionCache(store.cache, 60);
    await cache.loadGeneration();
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

  it('clears once per newer last_update', async () => {
    const cache = new PermissionCache(store.cache, 1800);
    const nowMs = Date.now();
    await cache.loadGeneration(nowMs);
    // Same second as the generation's creation: still detected as newer.
    const lastUpdate = Math.floor(nowMs / 1000);
    expect(await cache.observeLastUpdate(lastUpdate, nowMs)).toBe(true);
    const afterClear = cache.currentGeneration;
    expect(await cache.observeLastUpdate(lastUpdate, nowMs + 1000)).toBe(false);
    expect(cache.currentGeneration).toBe(afterClear);
    // A second process seeing the same update after the first one cleared does not clear again.
    const other = new PermissionCache(store.cache, 1800);
    await other.loadGeneration(nowMs + 2000);
    expect(await other.observeLastUpdate(lastUpdate, nowMs + 2000)).toBe(false);
  });

  it('clears for an update that follows a record set back to an older last_update', async () => {
    const cache = new PermissionCache(store.cache, 1800);
    const nowMs = Date.now();
    const now = Math.floor(nowMs / 1000);
    await cache.loadGeneration(nowMs);
    expect(await cache.observeLastUpdate(now, nowMs)).toBe(true);
    await cache.clear(nowMs, now - 3600);
    expect(await cache.observeLastUpdate(now - 3600, nowMs)).toBe(false);
    expect(await cache.observeLastUpdate(now, nowMs)).toBe(true);
  });

  it('reuses a grant from process memory within localMs, and never with a TTL of 0', async () => {
    const cache = new PermissionCache(store.cache, 60, { localMs: 1000 });
    await cache.loadGeneration();
    const nowMs = Date.now();
    const now = Math.floor(nowMs / 1000);
    await cache.remember('2:h/p:get', now, nowMs);
    await store.cache.clear();
    expect(await cache.lookup('2:h/p:get', 0, now, nowMs + 999)).toBe(true);
    expect(await cache.lookup('2:h/p:get', 0, now, nowMs + 1000)).toBe(false);

    const disabled = new PermissionCache(store.cache, 0, { localMs: 1000 });
    await disabled.loadGeneration();
    await disabled.remember('3:h/p:get', now);
    expect(await disabled.peek('3:h/p:get')).toBeUndefined();
  });
});
