import { createHash, randomBytes } from 'node:crypto';
import type { Cache } from 'cache-manager';

/**
 * The user-permission cache (seed 2.5 and 3, DECISIONS.md A8).
 *
 * Entry: `<user_id>:<host>/<path>:<method>` -> epoch seconds when the grant was cached, stored with
 * TTL = cachedPermissionsTtl. Only grants are cached; a miss always falls through to full evaluation.
 *
 * Clearing: every entry key starts with the current *generation*, a token kept under
 * `generation:<rbacRecordKey>` in the same namespace (so deployments with different records sharing a
 * store never clear each other's entries). Clearing writes a new token, so it is one write on every store kind, never
 * touches keys outside the namespace (memcached can only flush a whole server), and leaves the
 * superseded entries to their store TTL. Each process re-reads the token together with the RBAC record
 * (at most every rbacRecordRefreshMs), so a warm-cache request costs exactly one store read.
 */

/** Key of the generation token for the record key `scope`. */
export function generationTokenKey(scope: string): string {
  return `generation:${scope}`;
}

/** Memcached refuses keys over 250 bytes or with spaces/control characters; longer keys are hashed. */
const MAX_PLAIN_KEY_LENGTH = 200;
const UNSAFE_KEY_CHARACTERS = /[\s\u0000-\u001f\u007f]/;

export type EntryState = 'valid' | 'expired' | 'stale' | 'absent';

export interface Generation {
  id: string;
  /** Epoch ms when this generation started (when the cache was last cleared). */
  clearedAtMs: number;
  /**
   * The newest record last_update (epoch s) this generation already reflects. Compared with
   * last_update values, not clock times, so an update in the same second as a clear is not missed.
   */
  coveredUpdate: number;
}

/** The seed's key shape; `path` is the request path without query (it starts with `/`). */
export function permissionEntryKey(userId: string | number, host: string, path: string, method: string): string {
  return `${userId}:${host}${path}:${method.toLowerCase()}`;
}

/** Key inside the permissions namespace: `<generation>:<entry>`, or a digest when unsafe for memcached. */
export function generationKey(generation: string, entryKey: string): string {
  const plain = `${generation}:${entryKey}`;
  if (plain.length <= MAX_PLAIN_KEY_LENGTH && !UNSAFE_KEY_CHARACTERS.test(plain)) return plain;
  return `${generation}:sha256:${createHash('sha256').update(entryKey).digest('base64url')}`;
}

/**
 * Seed section 3 for one entry: older than the TTL -> expired; cached before the record's last_update
 * -> stale (the record changed since); otherwise valid. A value that is not a number is stale.
 */
export function classifyEntry(cachedAt: unknown, nowSeconds: number, ttlSeconds: number, lastUpdate: number): EntryState {
  if (cachedAt === undefined || cachedAt === null) return 'absent';
  if (typeof cachedAt !== 'number' || !Number.isFinite(cachedAt)) return 'stale';
  if (nowSeconds - cachedAt >= ttlSeconds) return 'expired';
  if (cachedAt < lastUpdate) return 'stale';
  return 'valid';
}

/** A last_update within the TTL that the current generation does not reflect yet requires a clear. */
export function lastUpdateRequiresClear(
  lastUpdate: number,
  nowMs: number,
  ttlSeconds: number,
  generation: Generation | undefined,
): boolean {
  const withinTtl = nowMs / 1000 - lastUpdate < ttlSeconds;
  return withinTtl && (generation === undefined || generation.coveredUpdate < lastUpdate);
}

export function newGeneration(nowMs: number, coveredUpdate: number): Generation {
  return {
    id: `${nowMs}-${coveredUpdate}-${randomBytes(6).toString('base64url')}`,
    clearedAtMs: nowMs,
    coveredUpdate,
  };
}

export function parseGeneration(value: unknown): Generation | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{1,16})-(\d{1,16})-[A-Za-z0-9_-]{1,32}$/.exec(value);
  return match ? { id: value, clearedAtMs: Number(match[1]), coveredUpdate: Number(match[2]) } : undefined;
}

interface LocalEntry {
  cachedAt: number;
  /** Epoch ms when this process last read or wrote the entry in the store. */
  seenAt: number;
}

export interface PermissionCacheOptions {
  /** Scope of the generation token: the RBAC record key. */
  scope?: string;
  /** How long (ms) a grant read from the store may be reused from process memory (0 = never). */
  localMs?: number;
  /** Bound of the process-local copy; it is emptied when full. */
  localMaxEntries?: number;
}

export class PermissionCache {
  private generation?: Generation;
  private lastSeenUpdate = Number.NEGATIVE_INFINITY;
  private readonly tokenKey: string;
  private readonly localMs: number;
  private readonly localMaxEntries: number;
  /**
   * Grants this process read or wrote recently, keyed by entry key, for the current generation only.
   * Reused for at most `localMs` (the record refresh interval), the same bound within which a change
   * made elsewhere reaches this process anyway; the TTL and staleness checks still apply on every use.
   */
  private local = new Map<string, LocalEntry>();
  private localGeneration?: string;

  constructor(
    readonly store: Cache,
    private readonly ttlSeconds: number,
    options: PermissionCacheOptions = {},
  ) {
    this.tokenKey = generationTokenKey(options.scope ?? 'permissions');
    this.localMs = options.localMs ?? 0;
    this.localMaxEntries = options.localMaxEntries ?? 10_000;
  }

  get currentGeneration(): Generation | undefined {
    return this.generation;
  }

  /**
   * Re-reads the shared generation token. A missing one (new store, or evicted) is replaced by a fresh
   * token rather than a fixed default, so entries of an old generation can never become visible again.
   * When the store cannot be read, the process moves to a private generation: a miss, never a grant.
   */
  async loadGeneration(nowMs = Date.now()): Promise<void> {
    const stored = parseGeneration(await this.store.get<string>(this.tokenKey).catch(() => undefined));
    if (stored) {
      this.generation = stored;
      return;
    }
    await this.clear(nowMs);
  }

  /**
   * Clears the whole cache for every process sharing the store: one write. `coveredUpdate` is the
   * record last_update the new generation reflects (default: the newest this process has seen).
   */
  async clear(nowMs = Date.now(), coveredUpdate = Math.max(this.lastSeenUpdate, 0)): Promise<void> {
    const generation = newGeneration(nowMs, coveredUpdate);
    this.generation = generation;
    // TTL 0 = never expires, whatever default TTL a host cache has.
    await this.store.set(this.tokenKey, generation.id, 0).catch(() => undefined);
  }

  /**
   * Called whenever the process reads the record: a last_update newer than the one it last saw and
   * within the TTL clears the cache, once, unless another process (or setRecord) already has.
   * Returns true when this call cleared it.
   */
  async observeLastUpdate(lastUpdate: number, nowMs = Date.now()): Promise<boolean> {
    // Compared with the last value seen, not the highest: a record set back to an older last_update
    // and then updated again must still clear.
    const newer = lastUpdate > this.lastSeenUpdate;
    this.lastSeenUpdate = lastUpdate;
    if (!newer || !lastUpdateRequiresClear(lastUpdate, nowMs, this.ttlSeconds, this.generation)) return false;
    await this.clear(nowMs, lastUpdate);
    return true;
  }

  /** True on a valid grant this process holds in memory (no store round trip). */
  lookupLocal(entryKey: string, lastUpdate: number, nowSeconds: number, nowMs = Date.now()): boolean {
    const generation = this.generation;
    if (!generation) return false;
    const local = this.localFor(generation.id).get(entryKey);
    return (
      local !== undefined &&
      nowMs - local.seenAt < this.localMs &&
      classifyEntry(local.cachedAt, nowSeconds, this.ttlSeconds, lastUpdate) === 'valid'
    );
  }

  /** True on a valid cached grant, in memory or in the store; an expired or stale entry is deleted (only that one). */
  async lookup(entryKey: string, lastUpdate: number, nowSeconds: number, nowMs = Date.now()): Promise<boolean> {
    return this.lookupLocal(entryKey, lastUpdate, nowSeconds, nowMs) || this.lookupStore(entryKey, lastUpdate, nowSeconds, nowMs);
  }

  /** The store half of {@link lookup}, for a caller that has already missed in memory. */
  async lookupStore(entryKey: string, lastUpdate: number, nowSeconds: number, nowMs = Date.now()): Promise<boolean> {
    const generation = this.generation;
    if (!generation) return false;
    const key = generationKey(generation.id, entryKey);
    const cachedAt = await this.store.get<unknown>(key).catch(() => undefined);
    const state = classifyEntry(cachedAt, nowSeconds, this.ttlSeconds, lastUpdate);
    if (state === 'valid') {
      this.keepLocal(entryKey, cachedAt as number, nowMs);
      return true;
    }
    this.local.delete(entryKey);
    if (state !== 'absent') await this.store.del(key).catch(() => undefined);
    return false;
  }

  /** Caches a grant with the current time; errors are ignored (the next request just evaluates again). */
  async remember(entryKey: string, nowSeconds: number, nowMs = Date.now()): Promise<void> {
    const generation = this.generation;
    // A TTL of 0 means nothing is ever valid; storing would only leave entries without expiry.
    if (!generation || this.ttlSeconds <= 0) return;
    this.localFor(generation.id);
    this.keepLocal(entryKey, nowSeconds, nowMs);
    await this.store
      .set(generationKey(generation.id, entryKey), nowSeconds, this.ttlSeconds * 1000)
      .catch(() => undefined);
  }

  /** The stored timestamp of an entry (tests and diagnostics). */
  async peek(entryKey: string): Promise<unknown> {
    return this.generation ? this.store.get(generationKey(this.generation.id, entryKey)) : undefined;
  }

  /** The local copy of the given generation; a new generation starts empty. */
  private localFor(generationId: string): Map<string, LocalEntry> {
    if (this.localGeneration !== generationId) {
      this.local = new Map();
      this.localGeneration = generationId;
    }
    return this.local;
  }

  private keepLocal(entryKey: string, cachedAt: number, nowMs: number): void {
    if (this.localMs <= 0) return;
    if (this.local.size >= this.localMaxEntries) this.local.clear();
    this.local.set(entryKey, { cachedAt, seenAt: nowMs });
  }
}
