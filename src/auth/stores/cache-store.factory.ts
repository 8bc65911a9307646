import { Logger } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import type { KeyvStoreAdapter } from 'keyv';
import {
  CACHE_STORE_KINDS,
  type CacheStoreKind,
  type CacheStoreOptions,
  type CacheStoreSetting,
} from '../auth-module-options.interface';
import { MemoryStore } from './memory.store';
import { POSTGRES_TABLE_PATTERN } from './postgres-table';

/** A built store and how to release it. Host-provided caches are never closed by Tollgate. */
export interface CacheStoreHandle {
  readonly cache: Cache;
  /** `host` = a cache-manager `Cache` given by the application (explicitly or via CacheModule). */
  readonly kind: CacheStoreKind | 'host';
  close(): Promise<void>;
}

export interface CacheStoreSpec {
  setting?: CacheStoreSetting;
  options?: CacheStoreOptions;
  /** Every key is stored as `<namespace>:<key>`. */
  namespace: string;
  /** Option name used in messages, e.g. `rbacCacheStore`. */
  optionName: string;
  /** The host's CACHE_MANAGER, used when no store is configured. */
  fallback?: Cache;
  /** Connection timeout for network stores (ms). */
  connectTimeoutMs?: number;
}

const STORE_OPTION_KEYS: Record<CacheStoreKind, readonly string[]> = {
  memory: [],
  redis: ['url'],
  memcached: ['servers'],
  postgres: ['url', 'table'],
};

export function isCacheInstance(value: unknown): value is Cache {
  const candidate = value as Partial<Cache> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.get === 'function' &&
    typeof candidate.set === 'function' &&
    typeof candidate.del === 'function'
  );
}

function urlErrors(name: string, url: unknown, protocols: readonly string[], example: string): string[] {
  if (typeof url !== 'string' || url.trim() === '') return [`${name} is required (e.g. ${example})`];
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    // The URL may carry a password: never echo it.
    return [`${name} is not a valid URL (e.g. ${example})`];
  }
  return protocols.includes(protocol) ? [] : [`${name} must use ${protocols.join(' or ')} (e.g. ${example})`];
}

function serverErrors(name: string, servers: unknown): string[] {
  if (!Array.isArray(servers) || servers.length === 0) {
    return [`${name} is required: a non-empty list of host:port strings (e.g. ["127.0.0.1:11211"])`];
  }
  const errors: string[] = [];
  servers.forEach((server, index) => {
    const match = typeof server === 'string' ? /^([^\s:,]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(server) : null;
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) {
      errors.push(`${name}[${index}] must be a host:port string (got ${JSON.stringify(server)})`);
    }
  });
  return errors;
}

/**
 * Every problem with one store setting, each message naming the option. Empty when valid.
 * `optionName` is the store option (`rbacCacheStore`); its options are `<optionName>Options`.
 */
export function cacheStoreErrors(optionName: string, setting: unknown, options: unknown): string[] {
  const optionsName = `${optionName}Options`;
  if (setting === undefined) return [];
  if (typeof setting !== 'string') {
    return isCacheInstance(setting)
      ? []
      : [`${optionName} must be one of ${CACHE_STORE_KINDS.join(', ')} or a cache-manager Cache instance`];
  }
  if (!(CACHE_STORE_KINDS as readonly string[]).includes(setting)) {
    return [`${optionName} must be one of ${CACHE_STORE_KINDS.join(', ')} (got ${JSON.stringify(setting)})`];
  }
  const kind = setting as CacheStoreKind;
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    return [`${optionsName} must be an object`];
  }
  const given = (options ?? {}) as Record<string, unknown>;
  const errors = Object.keys(given)
    .filter((key) => given[key] !== undefined && !STORE_OPTION_KEYS[kind].includes(key))
    .map((key) => `${optionsName}.${key} is not an option of the ${kind} store`);
  if (kind === 'redis') errors.push(...urlErrors(`${optionsName}.url`, given.url, ['redis:', 'rediss:'], 'redis://127.0.0.1:6379'));
  if (kind === 'memcached') errors.push(...serverErrors(`${optionsName}.servers`, given.servers));
  if (kind === 'postgres') {
    errors.push(
      ...urlErrors(`${optionsName}.url`, given.url, ['postgres:', 'postgresql:'], 'postgres://user@127.0.0.1:5432/db'),
    );
    if (given.table !== undefined && (typeof given.table !== 'string' || !POSTGRES_TABLE_PATTERN.test(given.table))) {
      errors.push(`${optionsName}.table must be an unquoted SQL identifier (letters, digits, _; at most 63)`);
    }
  }
  return errors;
}

/**
 * Values are JSON. A value without Keyv's `{value, expires}` envelope is taken as the value itself,
 * so an external system may write the bare RBAC record JSON under the record key.
 */
export function deserializeStoredValue(data: unknown): unknown {
  const text = Buffer.isBuffer(data) ? data.toString('utf8') : data;
  if (typeof text !== 'string') return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { value: text };
  }
  const isEnvelope = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'value' in parsed;
  return isEnvelope ? parsed : { value: parsed };
}

function serializeStoredValue(data: unknown): string {
  return JSON.stringify(data);
}

/**
 * The network stores' modules are required only when a setting names them, so a host on memory stores (or
 * its own cache) loads no Redis, Memcached or PostgreSQL client (docs/decisions.md C9).
 */
function buildAdapter(kind: CacheStoreKind, options: CacheStoreOptions, connectTimeoutMs: number): KeyvStoreAdapter {
  switch (kind) {
    case 'memory':
      return new MemoryStore();
    case 'redis': {
      const { default: KeyvRedis } = require('@keyv/redis') as typeof import('@keyv/redis');
      // No reconnect loop: a command against a dead server fails fast (fail closed) and the next
      // command connects again, instead of every request waiting behind an endless retry.
      const adapter = new KeyvRedis(
        {
          url: options.url,
          socket: { connectTimeout: connectTimeoutMs, reconnectStrategy: false },
          disableOfflineQueue: true,
        },
        { keyPrefixSeparator: ':', throwOnConnectError: true, throwOnErrors: true },
      );
      return adapter as unknown as KeyvStoreAdapter;
    }
    case 'memcached': {
      const { MemcachedStore } = require('./memcached.store') as typeof import('./memcached.store');
      return new MemcachedStore(options.servers ?? [], deserializeStoredValue);
    }
    case 'postgres': {
      const { PostgresStore } = require('./postgres.store') as typeof import('./postgres.store');
      return new PostgresStore({ url: options.url ?? '', table: options.table, connectionTimeoutMs: connectTimeoutMs });
    }
  }
}

/** Logs store errors without flooding: a dead server would otherwise log once per request. */
function errorReporter(logger: Logger, label: string): (error: unknown) => void {
  const quietMs = 10_000;
  let lastLogged = 0;
  let suppressed = 0;
  return (error) => {
    const now = Date.now();
    if (now - lastLogged < quietMs) {
      suppressed += 1;
      return;
    }
    const more = suppressed > 0 ? ` (${suppressed} similar errors suppressed)` : '';
    suppressed = 0;
    lastLogged = now;
    logger.error(`${label} store error: ${error instanceof Error ? error.message : String(error)}${more}`);
  };
}

/**
 * Builds the cache-manager `Cache` for one store setting. A given `Cache` passes through; an unset
 * setting means the host's cache (`fallback`) or, without one, process memory. Each call builds its
 * own connection: two settings naming the same server simply hold two clients.
 */
export function createCacheStore(spec: CacheStoreSpec): CacheStoreHandle {
  const errors = cacheStoreErrors(spec.optionName, spec.setting, spec.options);
  if (errors.length > 0) throw new Error(`Invalid cache store configuration: ${errors.join('; ')}`);

  const setting = spec.setting ?? spec.fallback ?? 'memory';
  if (typeof setting !== 'string') {
    return { cache: namespacedView(setting, spec.namespace), kind: 'host', close: async () => undefined };
  }

  // Required here, not at the top: the option checks above are what a server without auth stores loads this
  // file for (docs/decisions.md C13).
  const { Keyv } = require('keyv') as typeof import('keyv');
  const { createCache } = require('cache-manager') as typeof import('cache-manager');
  const adapter = buildAdapter(setting, spec.options ?? {}, spec.connectTimeoutMs ?? 2000);
  const keyv = new Keyv({
    store: adapter,
    namespace: spec.namespace,
    // The adapters prefix `<namespace>:` themselves; Keyv prefixing as well would double it.
    useKeyPrefix: false,
    serialize: serializeStoredValue,
    deserialize: deserializeStoredValue as never,
    throwOnErrors: true,
  });
  // Keyv hands the namespace to the adapter; the memory store is private to this cache and needs none.
  if (setting === 'memory') adapter.namespace = undefined;
  keyv.on('error', errorReporter(new Logger('TollgateCacheStore'), `${spec.optionName} (${setting})`));

  const cache = createCache({ stores: [keyv] });
  let closed: Promise<void> | undefined;
  return {
    cache,
    kind: setting,
    close: () => {
      closed ??= keyv.disconnect().then(
        () => undefined,
        () => undefined,
      );
      return closed;
    },
  };
}

/**
 * A host cache seen through `<namespace>:` keys, so the key layout is the same as in Tollgate's own
 * stores. `clear()` refuses: an arbitrary host store cannot clear one namespace safely.
 */
function namespacedView(cache: Cache, namespace: string): Cache {
  const prefix = `${namespace}:`;
  const view: Cache = {
    ...cache,
    get: (key) => cache.get(prefix + key),
    mget: (keys) => cache.mget(keys.map((key) => prefix + key)),
    ttl: (key) => cache.ttl(prefix + key),
    set: (key, value, ttl) => cache.set(prefix + key, value, ttl),
    mset: (list) => cache.mset(list.map((entry) => ({ ...entry, key: prefix + entry.key }))),
    del: (key) => cache.del(prefix + key),
    mdel: (keys) => cache.mdel(keys.map((key) => prefix + key)),
    clear: () => Promise.reject(new Error('clear() is not supported on a host-provided cache')),
    wrap: ((key: string, fn: () => unknown, ...rest: unknown[]) =>
      (cache.wrap as (...args: unknown[]) => unknown)(prefix + key, fn, ...rest)) as Cache['wrap'],
    // Direct store access would bypass the prefix.
    stores: [],
  };
  return view;
}

/**
 * Reads a key and lets store errors surface (cache-manager's `get` turns them into a miss). Tollgate's
 * own stores throw on errors; a host cache that swallows them still reads as a miss, which the RBAC
 * service treats as "record unavailable" and denies, so both paths fail closed.
 */
export async function readStrict<T>(cache: Cache, key: string): Promise<T | undefined> {
  const stores = (cache as Partial<Cache>).stores;
  if (!Array.isArray(stores) || stores.length === 0) return cache.get<T>(key);
  for (const store of stores) {
    const value = (await store.get(key)) as T | undefined;
    if (value !== undefined) return value;
  }
  return undefined;
}
