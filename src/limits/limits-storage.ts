import { Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type Redis from 'ioredis';
import type { LimitsStore } from './limits-settings';
import { failFastRedis } from '../common/fail-fast-redis';
import { StoreFailureLog } from '../common/store-failure-log';

type StorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** A hit that could not be counted: let it through, as if it were the first of its window. */
/** What a storage answers when it could not count (Redis unreachable: fail open). */
export const UNCOUNTED: StorageRecord = Object.freeze({ totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 });
const SWEEP_INTERVAL_MS = 60_000;

interface WindowCounter {
  hits: number;
  windowEndsAt: number;
  blockedUntil: number;
}

/**
 * Counters in process memory, with the Redis script's semantics (a fixed window per key, blocked for
 * `blockDuration` once over the limit). @nestjs/throttler's own ThrottlerStorageService keeps one timestamp
 * per hit and filters them on every hit, which costs O(hits in the window) per request: at a high limit and
 * load that made the guard ten times slower than the rest of the request (measured with bench:auth).
 */
export class MemoryLimitsStorage implements ThrottlerStorage, OnModuleDestroy {
  private readonly counters = new Map<string, WindowCounter>();
  private readonly sweeper = setInterval(() => this.sweep(Date.now()), SWEEP_INTERVAL_MS).unref();

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<StorageRecord> {
    const now = Date.now();
    const id = `${key}:${throttlerName}`;
    let counter = this.counters.get(id);
    if (!counter) {
      counter = { hits: 0, windowEndsAt: now + ttl, blockedUntil: 0 };
      this.counters.set(id, counter);
    } else if (counter.windowEndsAt <= now) {
      counter.hits = 0;
      counter.windowEndsAt = now + ttl;
    }
    counter.hits += 1;
    if (counter.blockedUntil <= now && counter.hits > limit) counter.blockedUntil = now + blockDuration;
    const isBlocked = counter.blockedUntil > now;
    return {
      totalHits: counter.hits,
      timeToExpire: Math.ceil((counter.windowEndsAt - now) / 1000),
      isBlocked,
      timeToBlockExpire: isBlocked ? Math.ceil((counter.blockedUntil - now) / 1000) : 0,
    };
  }

  /** Drops counters whose window and block are both over, so memory follows the active callers only. */
  sweep(now: number): void {
    for (const [id, counter] of this.counters) {
      if (counter.windowEndsAt <= now && counter.blockedUntil <= now) this.counters.delete(id);
    }
  }

  get size(): number {
    return this.counters.size;
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }
}

/**
 * Counters in Redis, shared by every instance pointing at it (@nest-lab/throttler-storage-redis: one Lua
 * script per hit, the hit and block keys hash-tagged together so Redis Cluster keeps them on one slot).
 * Commands never wait in an offline queue: while Redis is unreachable a hit is not counted and the request
 * passes (fail open; logged once per 30 s), so a store outage does not take the API down with it.
 */
export class RedisLimitsStorage implements ThrottlerStorage, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Limits');
  private readonly redis: Redis;
  private readonly counters: ThrottlerStorageRedisService;
  private readonly failures = new StoreFailureLog((message) => this.logger.error(message), (summary) => `rate-limit store unavailable (${summary}); requests pass uncounted until it answers`);

  constructor(url: string) {
    this.redis = failFastRedis(url);
    // Required here: memory limits load no Redis storage (decision C13).
    const { ThrottlerStorageRedisService: RedisStorage } = require('@nest-lab/throttler-storage-redis') as typeof import('@nest-lab/throttler-storage-redis');
    this.counters = new RedisStorage(this.redis);
  }

  /** Connects before the server listens, so the first requests are counted; an unreachable Redis is logged, not fatal. */
  async onModuleInit(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (error) {
      this.failures.report(error);
    }
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<StorageRecord> {
    try {
      return await this.counters.increment(key, ttl, limit, blockDuration, throttlerName);
    } catch (error) {
      this.failures.report(error);
      return UNCOUNTED;
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}

export function createLimitsStorage(store: LimitsStore): ThrottlerStorage {
  return store.kind === 'redis' ? new RedisLimitsStorage(store.url) : new MemoryLimitsStorage();
}
