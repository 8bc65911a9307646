import { createCache } from 'cache-manager';
import { cacheStoreErrors, createCacheStore, deserializeStoredValue, readStrict } from './cache-store.factory';

describe('cacheStoreErrors', () => {
  it('accepts every valid setting', () => {
    expect(cacheStoreErrors('rbacCacheStore', undefined, undefined)).toEqual([]);
    expect(cacheStoreErrors('rbacCacheStore', 'memory', {})).toEqual([]);
    expect(cacheStoreErrors('rbacCacheStore', 'redis', { url: 'rediss://:pw@cache:6380/2' })).toEqual([]);
    expect(cacheStoreErrors('rbacCacheStore', 'memcached', { servers: ['a:11211', '[::1]:11211'] })).toEqual([]);
    expect(cacheStoreErrors('rbacCacheStore', 'postgres', { url: 'postgresql://u@db/x', table: 'rbac_cache' })).toEqual([]);
    expect(cacheStoreErrors('rbacCacheStore', createCache(), undefined)).toEqual([]);
  });

  it.each([
    ['file', {}, /rbacCacheStore must be one of memory, redis, memcached, postgres \(got "file"\)/],
    [{ get: 1 }, {}, /rbacCacheStore must be one of .* or a cache-manager Cache instance/],
    ['redis', {}, /rbacCacheStoreOptions.url is required/],
    ['redis', { url: 'http://x' }, /rbacCacheStoreOptions.url must use redis: or rediss:/],
    ['redis', { url: 'not a url' }, /rbacCacheStoreOptions.url is not a valid URL/],
    ['redis', { url: 'redis://x', servers: ['a:1'] }, /rbacCacheStoreOptions.servers is not an option of the redis store/],
    ['memcached', {}, /rbacCacheStoreOptions.servers is required/],
    ['memcached', { servers: ['localhost'] }, /rbacCacheStoreOptions.servers\[0\] must be a host:port string/],
    ['memcached', { servers: ['h:70000'] }, /servers\[0\]/],
    ['postgres', { url: 'postgres://db/x', table: 'x; drop' }, /rbacCacheStoreOptions.table must be an unquoted SQL identifier/],
    ['memory', { url: 'redis://x' }, /rbacCacheStoreOptions.url is not an option of the memory store/],
    ['memory', 'x', /rbacCacheStoreOptions must be an object/],
  ])('rejects %p %p', (setting, options, message) => {
    expect(cacheStoreErrors('rbacCacheStore', setting, options)).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
  });

  it('never echoes a URL, which may carry a password', () => {
    const errors = cacheStoreErrors('rbacCacheStore', 'redis', { url: 'http://user:s3cret@host' });
    expect(errors.join(' ')).not.toContain('s3cret');
  });

  it('createCacheStore throws one message naming the option', () => {
    expect(() => createCacheStore({ setting: 'redis', namespace: 'n', optionName: 'permissionsCacheStore' })).toThrow(
      /Invalid cache store configuration: permissionsCacheStoreOptions.url is required/,
    );
  });
});

describe('deserializeStoredValue', () => {
  it('unwraps Keyv envelopes and wraps bare JSON or text', () => {
    expect(deserializeStoredValue('{"value":1,"expires":5}')).toEqual({ value: 1, expires: 5 });
    expect(deserializeStoredValue('{"last_update":1}')).toEqual({ value: { last_update: 1 } });
    expect(deserializeStoredValue(Buffer.from('[1]'))).toEqual({ value: [1] });
    expect(deserializeStoredValue('not json')).toEqual({ value: 'not json' });
  });
});

describe('host caches', () => {
  it('pass through under the namespace, never cleared or closed by Tollgate', async () => {
    const host = createCache();
    const handle = createCacheStore({ setting: host, namespace: 'tollgate:rbac', optionName: 'rbacCacheStore' });
    expect(handle.kind).toBe('host');
    await handle.cache.set('permissions', { a: 1 }, 0);
    expect(await host.get('tollgate:rbac:permissions')).toEqual({ a: 1 });
    expect(await readStrict(handle.cache, 'permissions')).toEqual({ a: 1 });
    await expect(handle.cache.clear()).rejects.toThrow(/not supported on a host-provided cache/);
    await handle.close();
    expect(await handle.cache.get('permissions')).toEqual({ a: 1 });
  });

  it('an unset store falls back to the host cache, else to memory', () => {
    const host = createCache();
    expect(createCacheStore({ namespace: 'n', optionName: 'x', fallback: host }).kind).toBe('host');
    const memory = createCacheStore({ namespace: 'n', optionName: 'x' });
    expect(memory.kind).toBe('memory');
    return memory.close();
  });
});
