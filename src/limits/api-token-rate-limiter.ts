import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import type { FastifyReply } from 'fastify';
import type { ApiTokenLimiter } from '../ai/http/api-auth.guard';
import { LIMITS_SETTINGS } from './limits.constants';
import { rateLimitExceeded } from './rate-limit-exceeded';
import { type LimitsSettings, type RateLimit, limitsKeyPrefix } from './limits-settings';

/**
 * The per-token limit of the /v1 API, on the same throttler storage as the tenant limit. The API auth guard
 * calls it once the token is accepted (a guard registered globally would run before it and count rejected
 * tokens), with the token's digest as the key.
 */
@Injectable()
export class ApiTokenRateLimiter implements ApiTokenLimiter {
  private readonly rateLimit: RateLimit;
  private readonly keyPrefix: string;

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(LIMITS_SETTINGS) settings: LimitsSettings,
  ) {
    this.rateLimit = settings.token!;
    this.keyPrefix = `${limitsKeyPrefix(settings)}token:`;
  }

  async consume(context: ExecutionContext, tokenKey: string): Promise<void> {
    const { limit, windowMs } = this.rateLimit;
    const record = await this.storage.increment(this.keyPrefix + tokenKey, windowMs, limit, windowMs, 'token');
    if (record.isBlocked) {
      throw rateLimitExceeded(context.switchToHttp().getResponse<FastifyReply>(), 'API token', limit, windowMs, record.timeToBlockExpire);
    }
  }
}
