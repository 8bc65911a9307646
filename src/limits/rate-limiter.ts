import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyReply } from 'fastify';
import { compileSkipPaths, type SkipPathMatcher } from '../auth/skip-paths';
import { LIMITS_SETTINGS, LIMITS_STORAGE } from './limits.constants';
import { UNCOUNTED } from './limits-storage';
import { type LimitsSettings, type RateLimit, limitsKeyPrefix } from './limits-settings';
import { rateLimitExceeded } from './rate-limit-exceeded';

export type LimitScope = 'tenant' | 'token';

/** One limit ready to count: its key prefix (callers are appended) and how the 429 message names it. */
export interface ResolvedLimit {
  scope: LimitScope;
  keyPrefix: string;
  rateLimit: RateLimit;
  description: string;
}

interface CompiledGroup {
  matches: SkipPathMatcher;
  limits: Partial<Record<LimitScope, ResolvedLimit>>;
}

const SCOPE_NAMES: Record<LimitScope, string> = { tenant: 'tenant', token: 'API token' };

/**
 * Counts one request of a caller on the throttler storage (memory or Redis) and refuses it with 429 once the
 * caller is over its limit. Keys: `<prefix><scope>:<caller>` for the defaults, `<prefix><scope>@<group>:<caller>`
 * for a route group; the storage adds the scope as the throttler name and its own suffixes.
 */
@Injectable()
export class RateLimiter {
  private readonly defaults: Partial<Record<LimitScope, ResolvedLimit>> = {};
  private readonly groups: CompiledGroup[];

  constructor(
    @Inject(LIMITS_STORAGE) private readonly storage: ThrottlerStorage,
    @Inject(LIMITS_SETTINGS) settings: LimitsSettings,
  ) {
    const prefix = limitsKeyPrefix(settings);
    for (const scope of ['tenant', 'token'] as const) {
      const rateLimit = settings[scope];
      if (rateLimit) this.defaults[scope] = { scope, keyPrefix: `${prefix}${scope}:`, rateLimit, description: `${SCOPE_NAMES[scope]} request limit` };
    }
    this.groups = settings.routes.map((group) => {
      const limits: CompiledGroup['limits'] = {};
      for (const scope of ['tenant', 'token'] as const) {
        const rateLimit = group[scope];
        if (rateLimit) {
          limits[scope] = { scope, keyPrefix: `${prefix}${scope}@${group.name}:`, rateLimit, description: `${SCOPE_NAMES[scope]} request limit of ${group.name}` };
        }
      }
      return { matches: compileSkipPaths(group.paths), limits };
    });
  }

  /** The limit of a request to `url`: the first route group matching its path that sets the scope, else the default. */
  limitFor(scope: LimitScope, url: string): ResolvedLimit | undefined {
    for (const group of this.groups) {
      const limit = group.limits[scope];
      if (limit && group.matches(url)) return limit;
    }
    return this.defaults[scope];
  }

  async consume(context: ExecutionContext, limit: ResolvedLimit, caller: string): Promise<true> {
    const { limit: allowed, windowMs } = limit.rateLimit;
    const record = await this.storage.increment(limit.keyPrefix + caller, windowMs, allowed, windowMs, limit.scope);
    const reply = context.getArgByIndex<FastifyReply>(1);
    if (record !== UNCOUNTED) {
      const remaining = Math.max(0, allowed - record.totalHits);
      announceLimit(reply, allowed, remaining, record.isBlocked ? record.timeToBlockExpire : record.timeToExpire);
    }
    if (record.isBlocked) throw rateLimitExceeded(reply, limit.description, allowed, windowMs, record.timeToBlockExpire);
    return true;
  }
}

const ANNOUNCED_REMAINING = Symbol('tollgate.rate-limit-remaining');

/**
 * `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the window, or the block, ends;
 * the header fields of the IETF httpapi draft as express-rate-limit's `draft-6` sends them). When a request
 * counts against two limits (tenant and API token), the one with fewer requests left is announced.
 */
function announceLimit(reply: FastifyReply, limit: number, remaining: number, resetSeconds: number): void {
  const state = reply as unknown as Record<symbol, number | undefined>;
  const announced = state[ANNOUNCED_REMAINING];
  if (announced !== undefined && announced <= remaining) return;
  state[ANNOUNCED_REMAINING] = remaining;
  reply.header('ratelimit-limit', String(limit));
  reply.header('ratelimit-remaining', String(remaining));
  reply.header('ratelimit-reset', String(Math.max(0, Math.ceil(resetSeconds))));
}
