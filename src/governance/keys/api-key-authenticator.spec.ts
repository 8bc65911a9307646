import { ConnectionError } from '../../common/errors';
import { InvalidKeyError } from '../governance-errors';
import { apiKeyOf } from '../governance-state';
import { generateApiKey } from './api-key-format';
import type { ApiKeyRecord } from './api-key-record';
import { ApiKeyAuthenticator, KEY_CACHE_TTL_MS } from './api-key-authenticator';
import { MemoryKeyStore } from './memory-key-store';

describe('ApiKeyAuthenticator', () => {
  let now: number;
  let store: MemoryKeyStore;
  let lookups: number;
  let authenticator: ApiKeyAuthenticator;

  beforeEach(() => {
    now = Date.parse('2026-01-10T12:00:00Z');
    store = new MemoryKeyStore();
    lookups = 0;
    const findByHash = store.findByHash.bind(store);
    store.findByHash = (hash) => {
      lookups++;
      return findByHash(hash);
    };
    authenticator = new ApiKeyAuthenticator(store, () => now);
  });

  async function newKey(overrides: Partial<ApiKeyRecord> = {}) {
    const generated = generateApiKey();
    const record: ApiKeyRecord = { id: generated.id, hash: generated.hash, tenant: 't-1', subTenant: 'north', createdAt: new Date(now).toISOString(), ...overrides };
    await store.create(record);
    return { key: generated.key, record };
  }

  it('turns a valid key into its identity and record', async () => {
    const { key, record } = await newKey({ models: ['openai/*'] });
    const state = await authenticator.authenticate(key);
    expect(state.identity).toEqual({ tenant: 't-1', subTenant: 'north', subject: record.id, subjectKind: 'key', keyId: record.id, roles: [] });
    expect(state.admin).toBe(false);
    expect(apiKeyOf(state)).toEqual(record);
  });

  it('refuses a malformed key without a store lookup', async () => {
    await expect(authenticator.authenticate('tg_nope')).rejects.toThrow(InvalidKeyError);
    expect(lookups).toBe(0);
  });

  it('refuses unknown, revoked and expired keys alike', async () => {
    await expect(authenticator.authenticate(generateApiKey().key)).rejects.toThrow('The API key is invalid, revoked or expired.');
    const revoked = await newKey({ revokedAt: '2026-01-01T00:00:00.000Z' });
    await expect(authenticator.authenticate(revoked.key)).rejects.toThrow(InvalidKeyError);
    const expiring = await newKey({ expiresAt: new Date(now + 1000).toISOString() });
    await expect(authenticator.authenticate(expiring.key)).resolves.toBeDefined();
    now += 1000;
    await expect(authenticator.authenticate(expiring.key)).rejects.toThrow(InvalidKeyError);
  });

  it('reuses a lookup for at most the cache TTL, so a revocation elsewhere takes effect within it', async () => {
    const { key, record } = await newKey();
    await Promise.all([authenticator.authenticate(key), authenticator.authenticate(key), authenticator.authenticate(key)]);
    expect(lookups).toBe(1);
    await store.revoke(record.id, new Date(now).toISOString());
    now += KEY_CACHE_TTL_MS - 1;
    // The reused lookup answers at once: the state itself, no promise.
    expect(authenticator.authenticate(key)).toMatchObject({ identity: { keyId: record.id, tenant: 't-1' } });
    now += 1;
    await expect(authenticator.authenticate(key)).rejects.toThrow(InvalidKeyError);
    expect(lookups).toBe(2);
  });

  it('reports an unreachable store as a connection error and does not cache the failure', async () => {
    const { key } = await newKey();
    const findByHash = store.findByHash;
    store.findByHash = () => Promise.reject(new Error('ECONNREFUSED redis://user:secret@host'));
    const failure = authenticator.authenticate(key);
    await expect(failure).rejects.toThrow(ConnectionError);
    await expect(failure).rejects.toThrow('The API key store is unavailable.');
    store.findByHash = findByHash;
    await expect(authenticator.authenticate(key)).resolves.toBeDefined();
  });
});
