/**
 * The key store contract against every kind on the real servers (Redis 6379, PostgreSQL 5432 database
 * `test`), each under a prefix / table unique to this run.
 */
import Redis from 'ioredis';
import { Pool } from 'pg';
import { generateApiKey } from '../src/governance/keys/api-key-format';
import type { ApiKeyRecord } from '../src/governance/keys/api-key-record';
import type { KeyStore, KeyStoreSettings } from '../src/governance/keys/key-store';
import { createKeyStore } from '../src/governance/keys/key-store.factory';
import { PostgresKeyStore } from '../src/governance/keys/postgres-key-store';

const REDIS_URL = process.env.TOLLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const POSTGRES_URL = process.env.TOLLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${process.pid}_${Date.now().toString(36)}`;
const REDIS_PREFIX = `tollgate:test-keys:${RUN}:`;
const PG_TABLE = `tollgate_keys_${RUN}`;

const kinds: Array<[string, KeyStoreSettings]> = [
  ['memory', { kind: 'memory' }],
  ['redis', { kind: 'redis', url: REDIS_URL, keyPrefix: REDIS_PREFIX }],
  ['postgres', { kind: 'postgres', url: POSTGRES_URL, table: PG_TABLE }],
];

let sequence = 0;
function newRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const { id, hash } = generateApiKey();
  return {
    id,
    hash,
    tenant: 't-1',
    createdAt: new Date(Date.parse('2026-01-01T00:00:00Z') + sequence++ * 1000).toISOString(),
    ...overrides,
  };
}

afterAll(async () => {
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${REDIS_PREFIX}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  const pool = new Pool({ connectionString: POSTGRES_URL });
  await pool.query(`DROP TABLE IF EXISTS ${PG_TABLE}`);
  await pool.end();
});

describe.each(kinds)('%s key store', (_kind, settings) => {
  let store: KeyStore;
  beforeAll(() => (store = createKeyStore(settings)));
  afterAll(() => store.close());

  it('finds a created key by hash and by id, with every setting', async () => {
    const record = newRecord({
      name: 'ci',
      subTenant: 'north',
      models: ['openai/*'],
      budget: { microUsd: 5_000_000, period: 'day' },
      rpm: 60,
      tpm: 1000,
      expiresAt: '2030-01-01T00:00:00.000Z',
    });
    await store.create(record);
    expect(await store.findByHash(record.hash)).toEqual(record);
    expect(await store.get(record.id)).toEqual(record);
    expect(await store.findByHash('0'.repeat(64))).toBeUndefined();
    expect(await store.get('000000000000')).toBeUndefined();
  });

  it('lists keys oldest first, optionally for one tenant', async () => {
    const tenant = `list-${RUN}-${_kind}`;
    const first = newRecord({ tenant });
    const second = newRecord({ tenant });
    const other = newRecord({ tenant: `${tenant}-other` });
    await store.create(second);
    await store.create(first);
    await store.create(other);
    expect((await store.list({ tenant })).map((record) => record.id)).toEqual([first.id, second.id]);
    const all = (await store.list()).map((record) => record.id);
    expect(all).toEqual(expect.arrayContaining([first.id, second.id, other.id]));
  });

  it('replaces the mutable settings on update, keeping the fixed part', async () => {
    const record = newRecord({ models: ['openai/*'], rpm: 5 });
    await store.create(record);
    const updated = await store.update(record.id, { tpm: 10, name: 'renamed' });
    const { models: _models, rpm: _rpm, ...fixed } = record;
    expect(updated).toEqual({ ...fixed, tpm: 10, name: 'renamed' });
    expect(await store.findByHash(record.hash)).toEqual(updated);
    expect(await store.update('000000000000', { rpm: 1 })).toBeUndefined();
  });

  it('revokes once, and an update never undoes the revocation', async () => {
    const record = newRecord();
    await store.create(record);
    const revoked = await store.revoke(record.id, '2026-02-01T00:00:00.000Z');
    expect(revoked?.revokedAt).toBe('2026-02-01T00:00:00.000Z');
    expect((await store.revoke(record.id, '2026-03-01T00:00:00.000Z'))?.revokedAt).toBe('2026-02-01T00:00:00.000Z');
    expect((await store.update(record.id, { rpm: 3 }))?.revokedAt).toBe('2026-02-01T00:00:00.000Z');
    expect((await store.findByHash(record.hash))?.revokedAt).toBe('2026-02-01T00:00:00.000Z');
    expect(await store.revoke('000000000000', '2026-02-01T00:00:00.000Z')).toBeUndefined();
  });
});

describe('key stores on shared servers', () => {
  it('a second Redis store instance sees a revocation made through the first', async () => {
    const one = createKeyStore({ kind: 'redis', url: REDIS_URL, keyPrefix: REDIS_PREFIX });
    const two = createKeyStore({ kind: 'redis', url: REDIS_URL, keyPrefix: REDIS_PREFIX });
    const record = newRecord();
    await one.create(record);
    await one.revoke(record.id, '2026-02-01T00:00:00.000Z');
    expect((await two.findByHash(record.hash))?.revokedAt).toBe('2026-02-01T00:00:00.000Z');
    await Promise.all([one.close(), two.close()]);
  });

  it('refuses a table name that is not a plain identifier', () => {
    expect(() => new PostgresKeyStore(POSTGRES_URL, 'keys; DROP TABLE x')).toThrow('invalid table name "keys; DROP TABLE x"');
  });
});
