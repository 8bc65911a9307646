import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import type {
  AuthRequest,
  CacheStoreOptions,
  CacheStoreSetting,
  ResolvedAuthOptions,
} from '../auth-module-options.interface';
import {
  AUTH_OPTIONS,
  DEFAULT_CACHED_PERMISSIONS_TTL,
  DEFAULT_PATHNAME_SLUG_PATTERN,
  DEFAULT_RBAC_RECORD_KEY,
  DEFAULT_RBAC_RECORD_REFRESH_MS,
  PERMISSIONS_NAMESPACE,
  PERMISSIONS_STORE,
  RBAC_NAMESPACE,
  RBAC_STORE,
} from '../auth.constants';
import { publishPermissionCache } from '../auth-events';
import type { AuthContext } from '../request-context';
import { createCacheStore, readStrict, type CacheStoreHandle } from '../stores/cache-store.factory';
import { PermissionCache, grantScope, permissionEntryKey } from './permission-cache';
import { compilePermissions, isAuthorized, type CompiledPermissions } from './permission-matcher';
import { parseRbacRecord, serializeRbacRecord, type RbacRecord } from './rbac-record';
import { DEFAULT_RBAC_RECORD_MAX_BYTES, RbacRecordTooLargeError, jsonBytesAtLeast } from './record-size';
import { requestHost, requestPathOf } from '../request-parts';
import { deriveResourcePath } from './resource-path';

/** A store that stays down is reported again at this interval, not on every refresh. */
const UNAVAILABLE_LOG_INTERVAL_MS = 30_000;
/**
 * How often a process re-reads a record it refused as too large: the store client parses all of it on
 * each read. setRecord (and so `tollgate rbac load`) writes a new generation token, read every refresh,
 * which brings a new record in at once.
 */
const REFUSED_RECORD_RECHECK_MS = 10_000;

/** The options RbacService reads: a subset of ResolvedAuthOptions, so the CLI can build it alone. */
export type RbacSettings = Partial<
  Pick<
    ResolvedAuthOptions,
    | 'pathnameSlugPattern'
    | 'cachedPermissionsTtl'
    | 'rbacRecordKey'
    | 'rbacRecordRefreshMs'
    | 'rbacRecordMaxBytes'
    | 'trustProxy'
  >
>;

/** What `RbacService.create()` takes: the store settings, without any JWT option. */
export interface RbacStandaloneOptions extends RbacSettings {
  rbacCacheStore?: CacheStoreSetting;
  rbacCacheStoreOptions?: CacheStoreOptions;
  permissionsCacheStore?: CacheStoreSetting;
  permissionsCacheStoreOptions?: CacheStoreOptions;
}

export type RbacDecision =
  | { allowed: true; cached: boolean }
  | { allowed: false; code: 'rbac_denied' | 'rbac_unavailable'; detail: string };

export interface RbacHealth {
  ready: boolean;
  rbacStore: 'up' | 'down';
  permissionsStore: 'up' | 'down';
  /** `too_large`: the stored record is over rbacRecordMaxBytes; a process that had a record keeps enforcing it. */
  record: 'ok' | 'missing' | 'invalid' | 'too_large' | 'unknown';
}

export interface SetRecordResult {
  lastUpdate: number;
  roles: number;
  permissions: number;
  /** Entries skipped as malformed. */
  warnings: string[];
}

interface RecordState {
  /** Epoch ms of the read; the record is served from memory until fetchedAt + refresh interval. */
  fetchedAt: number;
  record?: RbacRecord;
  compiled?: CompiledPermissions;
  /** The record as read, to skip recompiling an unchanged record. */
  raw?: string;
  /** Why there is no record. */
  reason?: string;
  /** Epoch ms of the read that found the stored record too large, while this one is still enforced. */
  refusedAt?: number;
}

// Request methods arrive upper-case; a lookup spares the per-request string allocation.
const LOWER_CASE_METHODS: ReadonlyMap<string, string> = new Map(
  ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((name) => [name, name.toLowerCase()]),
);

const ALLOW_CACHED: RbacDecision = { allowed: true, cached: true };
const ALLOW_EVALUATED: RbacDecision = { allowed: true, cached: false };

function deny(code: 'rbac_denied' | 'rbac_unavailable', detail: string): RbacDecision {
  return { allowed: false, code, detail };
}

/**
 * RBAC authorization (docs/decisions.md A8), and the record's administration for the CLI.
 *
 * The record lives under `<rbacRecordKey>` in the RBAC store, i.e. key `tollgate:rbac:permissions`
 * by default in every store kind. It is served from process memory for at most rbacRecordRefreshMs,
 * so a record written by another instance or an external system is enforced within that interval.
 */
/** The record's answer for one request, without the grant cache. */
function evaluate(compiled: CompiledPermissions, roles: string[], url: string, method: string, slugPattern: RegExp): RbacDecision {
  const resource = deriveResourcePath(url, slugPattern);
  if (resource === undefined) return deny('rbac_denied', 'the path holds a dot segment, an encoded separator or a backslash');
  if (!isAuthorized(compiled, roles, resource, method)) {
    return deny('rbac_denied', `no permission of the user's roles matches ${method.toUpperCase()} ${resource || '/'}`);
  }
  return ALLOW_EVALUATED;
}

@Injectable()
export class RbacService {
  private readonly logger = new Logger('RbacService');
  private readonly recordKey: string;
  private readonly refreshMs: number;
  private readonly ttlSeconds: number;
  private readonly slugPattern: RegExp;
  private readonly trustProxy: boolean;
  private readonly maxRecordBytes: number;
  private readonly permissions: PermissionCache;
  private state: RecordState = { fetchedAt: Number.NEGATIVE_INFINITY };
  private inflight?: Promise<RecordState>;
  private lastUnavailableLog = Number.NEGATIVE_INFINITY;
  /** Stores this instance built itself (`create()`), closed by `close()`. */
  private ownedStores: CacheStoreHandle[] = [];

  constructor(
    @Inject(AUTH_OPTIONS) options: RbacSettings,
    @Inject(RBAC_STORE) private readonly rbacStore: Cache,
    @Inject(PERMISSIONS_STORE) permissionsStore: Cache,
  ) {
    this.recordKey = options.rbacRecordKey ?? DEFAULT_RBAC_RECORD_KEY;
    this.refreshMs = options.rbacRecordRefreshMs ?? DEFAULT_RBAC_RECORD_REFRESH_MS;
    this.ttlSeconds = options.cachedPermissionsTtl ?? DEFAULT_CACHED_PERMISSIONS_TTL;
    this.slugPattern = options.pathnameSlugPattern ?? new RegExp(DEFAULT_PATHNAME_SLUG_PATTERN);
    this.trustProxy = options.trustProxy ?? false;
    this.maxRecordBytes = options.rbacRecordMaxBytes ?? DEFAULT_RBAC_RECORD_MAX_BYTES;
    this.permissions = new PermissionCache(permissionsStore, this.ttlSeconds, {
      scope: this.recordKey,
      localMs: this.refreshMs,
    });
  }

  /** Builds the service from store settings alone (CLI, scripts). Call `close()` when done. */
  static create(options: RbacStandaloneOptions): RbacService {
    const rbac = createCacheStore({
      setting: options.rbacCacheStore,
      options: options.rbacCacheStoreOptions,
      namespace: RBAC_NAMESPACE,
      optionName: 'rbacCacheStore',
    });
    let permissions: CacheStoreHandle;
    try {
      permissions = createCacheStore({
        setting: options.permissionsCacheStore,
        options: options.permissionsCacheStoreOptions,
        namespace: PERMISSIONS_NAMESPACE,
        optionName: 'permissionsCacheStore',
      });
    } catch (error) {
      void rbac.close();
      throw error;
    }
    const service = new RbacService(options, rbac.cache, permissions.cache);
    service.ownedStores = [rbac, permissions];
    return service;
  }

  /** Closes the stores `create()` built; stores injected by Nest are closed by their provider. */
  async close(): Promise<void> {
    const stores = this.ownedStores;
    this.ownedStores = [];
    await Promise.all(stores.map((store) => store.close()));
  }

  /**
   * The guard's question. Never throws: store failures deny (fail closed). Answers synchronously when
   * the record is fresh and the grant is in process memory (the warm path), so the guard need not await.
   */
  authorize(context: AuthContext, request: AuthRequest): RbacDecision | Promise<RbacDecision> {
    const roles = context.roleIds;
    if (!roles || roles.length === 0) return deny('rbac_denied', 'the token carries no roles');

    const now = Date.now();
    if (now - this.state.fetchedAt >= this.refreshMs) {
      return this.refresh(now).then((state) => this.decide(state, context, request, now));
    }
    return this.decide(this.state, context, request, now);
  }

  private decide(state: RecordState, context: AuthContext, request: AuthRequest, now: number): RbacDecision | Promise<RbacDecision> {
    if (!state.record || !state.compiled) {
      return deny('rbac_unavailable', `RBAC record unavailable: ${state.reason ?? 'unknown'}`);
    }
    const method = LOWER_CASE_METHODS.get(request.method) ?? request.method.toLowerCase();
    const nowSeconds = Math.floor(now / 1000);
    if (state.refusedAt !== undefined) return evaluate(state.compiled, context.roleIds, request.url, method, this.slugPattern);
    const entryKey = permissionEntryKey(grantScope(context), requestHost(request.headers, this.trustProxy), requestPathOf(request.url), method);
    if (this.permissions.lookupLocal(entryKey, state.record.lastUpdate, nowSeconds, now)) {
      publishPermissionCache(true);
      return ALLOW_CACHED;
    }
    return this.decideFromStore(state.record, state.compiled, context.roleIds, request.url, method, entryKey, nowSeconds, now);
  }

  private async decideFromStore(
    record: RbacRecord,
    compiled: CompiledPermissions,
    roles: string[],
    url: string,
    method: string,
    entryKey: string,
    nowSeconds: number,
    now: number,
  ): Promise<RbacDecision> {
    const hit = await this.permissions.lookupStore(entryKey, record.lastUpdate, nowSeconds, now);
    publishPermissionCache(hit);
    if (hit) return ALLOW_CACHED;

    const decision = evaluate(compiled, roles, url, method, this.slugPattern);
    if (decision.allowed) await this.permissions.remember(entryKey, nowSeconds, now);
    return decision;
  }

  /**
   * Validates and stores a record (object or JSON string), then clears the permission cache.
   * A record without `last_update` gets the current time. Throws on an invalid record, and
   * {@link RbacRecordTooLargeError} on one over rbacRecordMaxBytes as compact JSON.
   */
  async setRecord(input: unknown): Promise<SetRecordResult> {
    let value = input;
    if (typeof value === 'string') {
      try {
        value = JSON.parse(value);
      } catch {
        throw new Error('Invalid RBAC record: not valid JSON');
      }
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && !('last_update' in value)) {
      value = { ...value, last_update: Math.floor(Date.now() / 1000) };
    }
    const parsed = parseRbacRecord(value);
    if (!parsed.ok) throw new Error(`Invalid RBAC record: ${parsed.reason}`);

    const stored = serializeRbacRecord(parsed.record);
    const raw = JSON.stringify(stored);
    const bytes = Buffer.byteLength(raw);
    if (bytes > this.maxRecordBytes) throw new RbacRecordTooLargeError(bytes, this.maxRecordBytes);
    // TTL 0 = never expires, whatever default TTL a host cache has.
    await this.rbacStore.set(this.recordKey, stored, 0);
    const now = Date.now();
    await this.permissions.clear(now, parsed.record.lastUpdate);
    const warnings = [...parsed.warnings];
    this.state = this.compile(parsed.record, raw, now, warnings);

    const permissionLists = Object.values(parsed.record.permissions);
    return {
      lastUpdate: parsed.record.lastUpdate,
      roles: permissionLists.length,
      permissions: permissionLists.reduce((sum, list) => sum + list.length, 0),
      warnings,
    };
  }

  /**
   * The record as the store holds it now (read fresh), or undefined when there is none.
   * Throws when the store cannot be read or the stored record is unusable.
   */
  async getRecord(): Promise<RbacRecord | undefined> {
    const value = await readStrict<unknown>(this.rbacStore, this.recordKey);
    if (value === undefined) return undefined;
    const parsed = parseRbacRecord(value);
    if (!parsed.ok) throw new Error(`Stored RBAC record is unusable: ${parsed.reason}`);
    return parsed.record;
  }

  /** Clears every cached user permission (all users, all instances sharing the store). */
  async clearPermissionCache(): Promise<void> {
    await this.permissions.clear(Date.now(), this.state.record?.lastUpdate);
  }

  /** For /readyz: both stores answer a write/read probe and the record is present and valid. */
  async checkStore(): Promise<RbacHealth> {
    const [rbacStore, permissionsStore, record] = await Promise.all([
      this.probe(this.rbacStore),
      this.probe(this.permissions.store),
      this.readRecord().then(
        (read) => (read.record ? 'ok' : read.missing ? 'missing' : read.tooLarge ? 'too_large' : 'invalid') as RbacHealth['record'],
        () => 'unknown' as const,
      ),
    ]);
    // A process that keeps enforcing its previous record still serves correctly; one without a record denies all.
    const enforcing = record === 'ok' || (record === 'too_large' && this.state.record !== undefined);
    const health: RbacHealth = { ready: false, rbacStore, permissionsStore, record };
    health.ready = rbacStore === 'up' && permissionsStore === 'up' && enforcing;
    return health;
  }

  /** One store read per refresh interval, shared by every request waiting on it. */
  private refresh(now: number): Promise<RecordState> {
    this.inflight ??= this.load(now)
      .catch((error: unknown): RecordState => {
        this.logger.error(`RBAC record refresh failed: ${error instanceof Error ? error.message : String(error)}`);
        return (this.state = { fetchedAt: now, reason: 'refresh failed' });
      })
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  private async load(now: number): Promise<RecordState> {
    const refusedAt = this.state.refusedAt;
    if (refusedAt !== undefined && now - refusedAt < REFUSED_RECORD_RECHECK_MS) {
      const generation = this.permissions.currentGeneration?.id;
      await this.permissions.loadGeneration();
      if (this.permissions.currentGeneration?.id === generation) return (this.state = { ...this.state, fetchedAt: now });
    }
    const [read] = await Promise.all([this.readRecord(), this.permissions.loadGeneration()]);
    const enforced = this.state;
    let state: RecordState;
    if (read.tooLarge && enforced.record) {
      // Parsing and compiling it would stall every request: keep enforcing the record this process has.
      if (enforced.refusedAt === undefined) {
        this.logger.error(`RBAC record refused, still enforcing the one with last_update ${enforced.record.lastUpdate}: ${read.reason}`);
      }
      // The generation is left alone: processes enforcing different earlier records would clear it in turn
      // on every refresh. Decisions skip the cache meanwhile, since its grants follow another record.
      state = { ...enforced, fetchedAt: now, refusedAt: now };
    } else if (read.record && read.raw !== undefined) {
      state =
        enforced.record && enforced.raw === read.raw
          ? { ...enforced, fetchedAt: now, refusedAt: undefined }
          : this.compile(read.record, read.raw, now, read.warnings ?? []);
      await this.permissions.observeLastUpdate(read.record.lastUpdate, now);
    } else {
      state = { fetchedAt: now, reason: read.reason };
      if (now - this.lastUnavailableLog >= UNAVAILABLE_LOG_INTERVAL_MS || enforced.record) {
        this.lastUnavailableLog = now;
        this.logger.error(`RBAC record unavailable, denying every request (fail closed): ${read.reason}`);
      }
    }
    this.state = state;
    return state;
  }

  /** Compiles a new record version; every skipped entry is appended to `warnings` and logged once. */
  private compile(record: RbacRecord, raw: string, now: number, warnings: string[]): RecordState {
    const compiled = compilePermissions(record.permissions, (message) => warnings.push(message));
    for (const warning of warnings) this.logger.warn(`RBAC record: ${warning}`);
    return { fetchedAt: now, record, compiled, raw };
  }

  private async readRecord(): Promise<{
    record?: RbacRecord;
    raw?: string;
    warnings?: string[];
    missing?: boolean;
    tooLarge?: boolean;
    reason?: string;
  }> {
    let value: unknown;
    try {
      value = await readStrict<unknown>(this.rbacStore, this.recordKey);
    } catch (error) {
      return { reason: `the RBAC store cannot be read (${error instanceof Error ? error.message : String(error)})` };
    }
    if (value === undefined) return { missing: true, reason: `no record under key "${this.recordKey}"` };
    const limit = this.maxRecordBytes;
    // The bounded count first, so an oversized record is never serialised whole.
    if (jsonBytesAtLeast(value, limit) > limit) {
      return { tooLarge: true, reason: `the stored record is more than rbac_record_max_bytes (${limit}) as JSON` };
    }
    const raw = typeof value === 'string' ? value : JSON.stringify(value);
    const bytes = Buffer.byteLength(raw);
    if (bytes > limit) return { tooLarge: true, reason: new RbacRecordTooLargeError(bytes, limit).message };
    const parsed = parseRbacRecord(value);
    if (!parsed.ok) return { reason: parsed.reason };
    return { record: parsed.record, raw, warnings: parsed.warnings };
  }

  private async probe(store: Cache): Promise<'up' | 'down'> {
    const key = `probe:${process.pid}:${Math.random().toString(36).slice(2)}`;
    try {
      await store.set(key, 1, 5000);
      const value = await store.get<number>(key);
      await store.del(key);
      return value === 1 ? 'up' : 'down';
    } catch {
      return 'down';
    }
  }
}
