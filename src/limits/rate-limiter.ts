import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyReply } from 'fastify';
import { LIMITS_SETTINGS, LIMITS_STORAGE } from './limits.constants';
import { type LimitsSettings, type RateLimit, limitsKeyPrefix } from './limits-settings';
import { rateLimitExceeded } from './rate-limit-exceeded';

export type LimitScope = 'tenant' | 'token';

/** As the 429 message names them. */
const SCOPE_NAMES: Record<LimitScope, string> = { tenant: 'tenant', token: 'API token' };

/**
 * Counts one request of a caller on the throttler storage (memory or Redis) and refuses it with 429 once
 * the caller is over its limit. Keys: `<prefix><scope>:<caller>`; the storage adds the scope as the
 * throttler name and its own suffixes.
 */
@Injectable()
export class RateLimiter {
  private readonly keyPrefix: string;

  constructor(
    @Inject(LIMITS_STORAGE) private readonly storage: ThrottlerStorage,
    @Inject(LIMITS_SETTINGS) settings: LimitsSettings,
  ) {
    this.keyPrefix = limitsKeyPrefix(settings);
  }

  async consume(context: ExecutionContext, scope: LimitScope, caller: string, rateLimit: RateLimit): Promise<true> {
    const { limit, windowMs } = rateLimit;
    const record = await this.storage.increment(`${this.keyPrefix}${scope}:${caller}`, windowMs, limit, windowMs, scope);
    if (record.isBlocked) {
      throw rateLimitExceeded(context.switchToHttp().getResponse<FastifyReply>(), SCOPE_NAMES[scope], limit, windowMs, record.timeToBlockExpire);
    }
    return true;
  }
}
