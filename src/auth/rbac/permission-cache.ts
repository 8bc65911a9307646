import { createHash, randomBytes } from 'node:crypto';
import type { Cache } from 'cache-manager';
import type { AuthContext } from '../request-context';

/**
 * The user-permission cache (docs/decisions.md A8).
 *
 * Entry: `<user_id>:<digest>:<host>/<path>:<method>` -> epoch seconds when the grant was cached, stored with
 * TTL = cachedPermissionsTtl. `<digest>` covers everything the token brings to the decision (user, tenant,
 * subdomain claim, the set of roles), so a grant never outlives a role taken away or crosses to another
 * tenant with the same user id. Only grants are cached; a miss always falls through
 * to full evaluation.
 *
 * Clearing: every entry key starts with the current *generation*, a token kept under
 * `generation:<rbacRecordKey>` in the same namespace (so deployments with different records sharing a
 * store never clear each other's entries). Clearing writes a new token, so it is one write on every store kind, never
 * touches keys outside the namespace (memcached can only flush a whole server), and leaves the
 * superseded entries to their store TTL. A generation names the record last_update its grants were
 * computed under; a process enforcing a record with any other last_update (newer or older) clears. Each
 * process re-reads the token together with the RBAC record (at most every rbacRecordRefreshMs), so a
 * warm-cache request costs exactly one store read.
 */

/** Key of the generation token for the record key `scope`. */
export function generationTokenKey(scope: string): string {
  return `generation:${scope}`;
}

/** Memcached refuses keys over 250 bytes or with spaces/control characters; longer keys are hashed. */
const MAX_PLAIN_KEY_LENGTH = 200;
const UNSAFE_KEY_CHARACTERS = /[\s\u0000-\u001f\u007f]/;

/** Length of the scope digest: 22 base64url characters = 132 bits of SHA-256. */
const SCOPE_DIGEST_LENGTH = 22;
/** Stands for "no record seen yet": a last_update is never negative. */
const NO_UPDATE = -1;

export type EntryState = 'valid' | 'expired' | 'stale' | 'absent';

export interface Generation {
  id: string;
  /** Epoch ms when this generation started (when the cache was last cleared). */
  clearedAtMs: number;
  /**
   * The record last_update (epoch s) this generation's grants were computed under. Compared with
   * last_update values, not clock times, so an update in the same second as a clear is not missed.
   */
  coveredUpdate: number;
}

/** What a token brings to an RBAC decision. */
export type GrantIdentity = Pick<AuthContext, 'userId' | 'tenantId' | 'subdomain' | 'roleIds'>;

// The guard maps claims once per token into a frozen context shared by its requests: one digest per token.
const scopes = new WeakMap<GrantIdentity, string>();

function computeGrantScope(identity: GrantIdentity): string {
  // Role order and repeats do not change a decision. JSON keeps the parts apart whatever they contain.
  const roles = [...new Set(identity.roleIds)].sort();
  const parts = JSON.stringify([identity.userId, identity.tenantId ?? null, identity.subdomain ?? null, roles]);
  const digest = createHash('sha256').update(parts).digest('base64url').slice(0, SCOPE_DIGEST_LENGTH);
  return `${identity.userId}:${digest}`;
}

/**
 * `<user_id>:<digest of user, tenant, subdomain claim and sorted roles>`. Remembered only for a frozen
 * context with frozen roles, since only then can it not change under the key.
 */
export function grantScope(identity: GrantIdentity): string {
  const known = scopes.get(identity);
  if (known !== undefined) return known;
  const scope = computeGrantScope(identity);
  if (Object.isFrozen(identity) && Object.isFrozen(identity.roleIds)) scopes.set(identity, scope);
  return scope;
}

/** `scope` from {@link grantScope}; `path` is the request path without query (it starts with `/`). */
export function permissionEntryKey(scope: string, host: string, path: string, method: string): string {
  // The Host header is the caller's text: escaped when it holds `/` or `%`, so `Host: a/admin` + `/users` cannot
  // name the entry of `a` + `/admin/users`. The path starts at the first `/` after the scope.
  const hostPart = host.includes('/') || host.includes('%') ? encodeURIComponent(host) : host;
  return `${scope}:${hostPart}${path}:${method.toLowerCase()}`;
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

export function newGeneration(nowMs: number, coveredUpdate: number): Generation {
  return {
    id: `${nowMs}-${coveredUpdate}-${randomBytes(6).toString('base64url')}`,
    clearedAtMs: nowMs,
    coveredUpdate,
  };
}

export function parseGeneration(value: unknown): Generation | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{1,16})-(\d{1,16}|-1)-[A-Za-z0-9_-]{1,32}$/.exec(value);
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
   * Re-reads the shared generation token. Without a readable one (new store, evicted, store down) the
   * process has no generation until {@link observeLastUpdate} starts one: a miss, never a grant.
   */
  async loadGeneration(): Promise<void> {
    this.generation = parseGeneration(await this.store.get<string>(this.tokenKey).catch(() => undefined));
  }

  /**
   * Clears the whole cache for every process sharing the store: one write. `coveredUpdate` is the
   * record last_update the new generation's grants are computed under (default: the current one's).
   * When the write fails the process still moves to the new generation, alone.
   */
  async clear(nowMs = Date.now(), coveredUpdate = this.generation?.coveredUpdate ?? NO_UPDATE): Promise<void> {
    const generation = newGeneration(nowMs, coveredUpdate);
    this.generation = generation;
    // TTL 0 = never expires, whatever default TTL a host cache has.
    await this.store.set(this.tokenKey, generation.id, 0).catch(() => undefined);
  }

  /**
   * Called whenever the process reads the record: grants computed under any other last_update, newer
   * or older (a record restored, or written by a system with another clock), are cleared, once for all
   * processes: the next one to read the same record finds a generation that already covers it.
   * Returns true when this call cleared.
   */
  async observeLastUpdate(lastUpdate: number, nowMs = Date.now()): Promise<boolean> {
    if (this.generation?.coveredUpdate === lastUpdate) return false;
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
