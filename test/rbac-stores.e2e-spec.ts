import { createServer } from 'node:net';
import { createClient } from '@keyv/redis';
import memjs from 'memjs';
import { Pool } from 'pg';
import type { CacheStoreKind, CacheStoreOptions } from '../src/auth/auth-module-options.interface';
import { PermissionCache, generationTokenKey } from '../src/auth/rbac/permission-cache';
import { createCacheStore, readStrict, type CacheStoreHandle } from '../src/auth/stores/cache-store.factory';
import { PostgresStore } from '../src/auth/stores/postgres.store';

/**
 * The same store suite against every kind, on the real servers (Redis 6379, Memcached 11211,
 * PostgreSQL 5432 database `test`). Every key lives under a namespace unique to this run.
 */
const REDIS_URL = process.env.TOLLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MEMCACHED = process.env.TOLLGATE_TEST_MEMCACHED ?? '127.0.0.1:11211';
const POSTGRES_URL = process.env.TOLLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${process.pid}-${Date.now().toString(36)}`;
const PG_TABLE = `tollgate_stores_${process.pid}`;

const kinds: Array<[CacheStoreKind, CacheStoreOptions]> = [
  ['memory', {}],
  ['redis', { url: REDIS_URL }],
  ['memcached', { servers: [MEMCACHED] }],
  ['postgres', { url: POSTGRES_URL, table: PG_TABLE }],
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Native access to the server behind a kind, to check the key layout from outside. */
interface Native {
  get(key: string): Promise<string | undefined>;
  put(key: string, value: string): Promise<void>;
  remove(key: string): Promise<void>;
  close(): Promise<void>;
}

async function nativeClient(kind: CacheStoreKind): Promise<Native | undefined> {
  if (kind === 'redis') {
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    return {
      get: async (key) => (await client.get(key)) ?? undefined,
      put: async (key, value) => void (await client.set(key, value)),
      remove: async (key) => void (await client.del(key)),
      close: async () => void (await client.close()),
    };
  }
  if (kind === 'memcached') {
    const client = memjs.Client.create(MEMCACHED, { logger: { log: () => undefined } });
    return {
      get: async (key) => (await client.get(key)).value?.toString('utf8'),
      put: async (key, value) => void (await client.set(key, value, {})),
      remove: async (key) => void (await client.delete(key)),
      close: async () => client.close(),
    };
  }
  if (kind === 'postgres') {
    const pool = new Pool({ connectionString: POSTGRES_URL });
    return {
      get: async (key) => (await pool.query(`SELECT value FROM ${PG_TABLE} WHERE key = $1`, [key])).rows[0]?.value,
      put: async (key, value) =>
        void (await pool.query(
          `INSERT INTO ${PG_TABLE} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
          [key, value],
        )),
      remove: async (key) => void (await pool.query(`DELETE FROM ${PG_TABLE} WHERE key = $1`, [key])),
      close: () => pool.end(),
    };
  }
  return undefined;
}

describe.each(kinds)('cache store: %s', (kind, options) => {
  const namespace = `tollgate-test:stores:${RUN}:${kind}`;
  const foreignNamespace = `tollgate-test:foreign:${RUN}:${kind}`;
  let store: CacheStoreHandle;
  let foreign: CacheStoreHandle;
  let native: Native | undefined;

  beforeAll(async () => {
    store = createCacheStore({ setting: kind, options, namespace, optionName: 'testStore' });
    foreign = createCacheStore({ setting: kind, options, namespace: foreignNamespace, optionName: 'testStore' });
    // Creates the Postgres table before native access.
    await store.cache.set('warmup', 1, 1000);
    native = await nativeClient(kind);
  });

  afterAll(async () => {
    await store.cache.del('warmup');
    await store.cache.del(generationTokenKey('permissions'));
    await foreign.cache.del('kept');
    if (native) {
      await native.remove(`${namespace}:permissions`);
      await native.remove(`${RUN}-foreign-raw`);
      if (kind === 'postgres') {
        const pool = new Pool({ connectionString: POSTGRES_URL });
        await pool.query(`DROP TABLE IF EXISTS ${PG_TABLE}`);
        await pool.end();
      }
      await native.close();
    }
    await Promise.all([store.close(), foreign.close()]);
  });

  it('stores and reads objects, numbers and strings; deletes', async () => {
    await store.cache.set('object', { a: [1, 'b'] }, 10_000);
    await store.cache.set('number', 42, 10_000);
    await store.cache.set('string', 'text', 10_000);
    expect(await store.cache.get('object')).toEqual({ a: [1, 'b'] });
    expect(await store.cache.get('number')).toBe(42);
    expect(await store.cache.get('string')).toBe('text');
    expect(await store.cache.get('absent')).toBeUndefined();
    expect(await store.cache.del('number')).toBe(true);
    expect(await store.cache.get('number')).toBeUndefined();
    await store.cache.mdel(['object', 'string']);
  });

  it('expires entries after their TTL', async () => {
    // memcached counts a TTL in whole seconds on a clock that ticks once a second: an entry given 1 s can be
    // gone at the next tick, right after it was written, so it gets 2 s (gone between 1 and 2 s later).
    const ttlMs = kind === 'memcached' ? 2000 : 1000;
    await store.cache.set('short', 'x', ttlMs);
    await store.cache.set('long', 'y', 60_000);
    expect(await store.cache.get('short')).toBe('x');
    await sleep(ttlMs + 300);
    expect(await store.cache.get('short')).toBeUndefined();
    expect(await store.cache.get('long')).toBe('y');
    await store.cache.del('long');
  });

  it('keeps a value with TTL 0 without expiry', async () => {
    await store.cache.set('forever', 'z', 0);
    expect(await store.cache.get('forever')).toBe('z');
    await store.cache.del('forever');
  });

  it('clears the permission cache by generation without touching other namespaces', async () => {
    await foreign.cache.set('kept', 'foreign', 60_000);
    const permissions = new PermissionCache(store.cache, 60);
    const now = Math.floor(Date.now() / 1000);
    await permissions.observeLastUpdate(now);
    await permissions.remember('7:acme.example.com/api/v1/acme/reports:get', now);
    expect(await permissions.lookup('7:acme.example.com/api/v1/acme/reports:get', 0, now)).toBe(true);

    await permissions.clear();
    expect(await permissions.lookup('7:acme.example.com/api/v1/acme/reports:get', 0, now)).toBe(false);
    expect(await foreign.cache.get('kept')).toBe('foreign');

    // Another process sharing the store sees the new generation on its next read.
    const other = new PermissionCache(store.cache, 60);
    await other.loadGeneration();
    expect(other.currentGeneration?.id).toBe(permissions.currentGeneration?.id);
  });

  if (kind === 'memcached') {
    it('refuses a store-wide clear instead of flushing the server', async () => {
      await foreign.cache.set('kept', 'foreign', 60_000);
      await native!.put(`${RUN}-foreign-raw`, 'raw');
      await expect(store.cache.stores[0].clear()).rejects.toThrow(/not supported on a memcached store/);
      expect(await foreign.cache.get('kept')).toBe('foreign');
      expect(await native!.get(`${RUN}-foreign-raw`)).toBe('raw');
    });
  } else {
    it('clear() removes its own namespace only', async () => {
      await store.cache.set('mine', 1, 60_000);
      await foreign.cache.set('kept', 'foreign', 60_000);
      if (native) await native.put(`${RUN}-foreign-raw`, 'raw');
      await store.cache.clear();
      expect(await store.cache.get('mine')).toBeUndefined();
      expect(await foreign.cache.get('kept')).toBe('foreign');
      if (native) expect(await native.get(`${RUN}-foreign-raw`)).toBe('raw');
    });
  }

  if (kind !== 'memory') {
    it('stores a key as <namespace>:<key> and reads a bare JSON value written by another system', async () => {
      await store.cache.set('permissions', { last_update: 1, permissions: {} }, 0);
      const raw = await native!.get(`${namespace}:permissions`);
      expect(JSON.parse(raw!)).toEqual({ value: { last_update: 1, permissions: {} } });

      await native!.put(`${namespace}:permissions`, '{"last_update":2,"permissions":{"1":["*:*"]}}');
      expect(await readStrict(store.cache, 'permissions')).toEqual({ last_update: 2, permissions: { '1': ['*:*'] } });
    });

    it('a second store with the same settings works on its own and survives the first closing', async () => {
      const twin = createCacheStore({ setting: kind, options, namespace, optionName: 'testStore' });
      await twin.cache.set('twin', 't', 10_000);
      expect(await store.cache.get('twin')).toBe('t');
      await twin.close();
      expect(await store.cache.get('twin')).toBe('t');
      await store.cache.del('twin');
    });
  }
});

describe('unreachable stores fail fast and loudly (never a silent miss)', () => {
  const cases: Array<[CacheStoreKind, (port: number) => CacheStoreOptions]> = [
    ['redis', (port) => ({ url: `redis://127.0.0.1:${port}` })],
    ['memcached', (port) => ({ servers: [`127.0.0.1:${port}`] })],
    ['postgres', (port) => ({ url: `postgres://postgres@127.0.0.1:${port}/test` })],
  ];

  it.each(cases)('%s: readStrict rejects within the timeout, without crashing', async (kind, options) => {
    const port = await closedPort();
    const store = createCacheStore({ setting: kind, options: options(port), namespace: 'tollgate-test:down', optionName: 'testStore' });
    const started = Date.now();
    await expect(readStrict(store.cache, 'permissions')).rejects.toBeDefined();
    // cache-manager's own get turns the error into a miss; the RBAC service never relies on it.
    expect(await store.cache.get('permissions')).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5000);
    await store.close();
  });
});

describe('PostgresStore housekeeping', () => {
  const table = `tollgate_sweep_${process.pid}`;
  afterAll(async () => {
    const pool = new Pool({ connectionString: POSTGRES_URL });
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });

  it('sweeps expired rows that nobody reads again, and only those', async () => {
    const store = new PostgresStore({ url: POSTGRES_URL, table, sweepIntervalMs: 50 });
    store.namespace = 'tollgate-test:sweep';
    await store.set('gone', '"x"', 10);
    await store.set('kept', '"y"', 60_000);
    await store.set('forever', '"z"');
    // The sweep runs on its own timer: wait for its effect rather than for a time a busy machine may not keep.
    const pool = new Pool({ connectionString: POSTGRES_URL });
    const storedKeys = async () => (await pool.query(`SELECT key FROM ${table} ORDER BY key`)).rows.map((row) => row.key);
    const deadline = Date.now() + 10_000;
    let keys = await storedKeys();
    while (keys.includes('tollgate-test:sweep:gone') && Date.now() < deadline) {
      await sleep(50);
      keys = await storedKeys();
    }
    await pool.end();
    await store.disconnect();
    expect(keys).toEqual(['tollgate-test:sweep:forever', 'tollgate-test:sweep:kept']);
  });

  it('refuses a table name that is not a plain identifier', () => {
    expect(() => new PostgresStore({ url: POSTGRES_URL, table: 'x"; DROP TABLE y; --' })).toThrow(/invalid table name/);
  });
});
