import type { default as Redis, RedisOptions } from 'ioredis';

/**
 * A Redis client for a counter store on the request path: commands never wait in an offline queue (they
 * fail at once while Redis is unreachable, and the store decides whether that fails open or closed), one
 * retry per command, reconnects every 0.2–2 s. Not connected until the store connects it. `overrides` are the
 * store's own departures from these.
 */
export function failFastRedis(url: string, overrides: RedisOptions = {}): Redis {
  // Required here, not at the top: a configuration without Redis loads no Redis client (decision C13).
  const { default: RedisClient } = require('ioredis') as typeof import('ioredis');
  const redis = new RedisClient(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    // After a failed connection the socket never reports its close, and this timer would hold the process
    // at shutdown for ioredis's default 2 s.
    disconnectTimeout: 200,
    // Commands issued in the same tick go out in one write: on loopback each socket write cost ~20 µs of
    // CPU, more than the rest of a budgeted call's governance (bench/RESULTS.md, 2026-11-27).
    enableAutoPipelining: true,
    ...overrides,
  });
  // Failures surface on the commands that meet them; a background reconnect must not crash or flood the log.
  redis.on('error', () => undefined);
  return redis;
}
