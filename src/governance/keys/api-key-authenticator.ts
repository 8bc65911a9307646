import { ConnectionError } from '../../common/errors';
import { InvalidKeyError } from '../governance-errors';
import { type KeyRequestState, stateForKey } from '../governance-state';
import { apiKeyId, hashApiKey } from './api-key-format';
import { type ApiKeyRecord, keyInactiveReason } from './api-key-record';
import type { KeyStore } from './key-store';

/** How long a looked-up record (or its absence) is reused: bounds how late a revocation takes effect everywhere. */
export const KEY_CACHE_TTL_MS = 500;
const MAX_CACHED_KEYS = 10_000;

interface CachedLookup {
  until: number;
  record: Promise<ApiKeyRecord | undefined>;
  /** Once the lookup has answered: the record (or its absence) and the caller state made from it. */
  found?: { record: ApiKeyRecord | undefined; state?: KeyRequestState };
}

/**
 * Turns a presented API key into the caller's governance state. A malformed key is refused without a
 * store lookup; a well-formed one is looked up by its SHA-256, each result reused for at most
 * {@link KEY_CACHE_TTL_MS} (concurrent requests with one key share one lookup), so a key revoked in a
 * shared store is refused by every process within that time. Revocation and expiry are checked on every
 * request, against the cached record. A key whose lookup has answered is admitted synchronously (the guard
 * then returns no promise for Nest to await); a refusal is always a rejected promise.
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CachedLookup>();

  constructor(
    private readonly store: KeyStore,
    private readonly now: () => number = Date.now,
  ) {}

  authenticate(key: string): KeyRequestState | Promise<KeyRequestState> {
    const id = apiKeyId(key);
    if (id === undefined) return Promise.reject(new InvalidKeyError());
    const lookup = this.lookup(hashApiKey(key));
    if (lookup.found) return this.admit(lookup.found, id) ?? Promise.reject(new InvalidKeyError());
    return lookup.record.then(() => {
      const state = lookup.found && this.admit(lookup.found, id);
      if (!state) throw new InvalidKeyError();
      return state;
    });
  }

  /** Forgets the cached lookup of one key, so this process's own revocations and updates take effect at once. */
  forget(hash: string): void {
    this.cache.delete(hash);
  }

  /** The caller state of an active key; undefined for a missing, revoked or expired one. */
  private admit(found: NonNullable<CachedLookup['found']>, id: string): KeyRequestState | undefined {
    const record = found.record;
    // The id is part of the hashed key, so a record found by hash always carries it; checked all the same.
    if (!record || record.id !== id || keyInactiveReason(record, this.now()) !== undefined) return undefined;
    found.state ??= stateForKey(record);
    return found.state;
  }

  private lookup(hash: string): CachedLookup {
    const now = this.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached;
    if (cached) this.cache.delete(hash);
    else if (this.cache.size >= MAX_CACHED_KEYS) this.evictExpiredOrOldest(now);
    const lookup: CachedLookup = {
      until: now + KEY_CACHE_TTL_MS,
      record: this.store.findByHash(hash).then(
        (record) => {
          lookup.found = { record };
          return record;
        },
        (error: unknown) => {
          this.cache.delete(hash);
          throw new ConnectionError('The API key store is unavailable.', { cause: error });
        },
      ),
    };
    this.cache.set(hash, lookup);
    return lookup;
  }

  private evictExpiredOrOldest(now: number): void {
    for (const [hash, entry] of this.cache) if (entry.until <= now) this.cache.delete(hash);
    // Map keeps insertion order: the first entry is the oldest.
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value as string);
  }
}
