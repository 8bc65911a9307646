import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { ApiTokenLimiter } from '../ai/http/api-auth.guard';
import { LIMITS_SETTINGS } from './limits.constants';
import type { LimitsSettings, RateLimit } from './limits-settings';
import { RateLimiter } from './rate-limiter';

/**
 * The per-token limit of the /v1 API. The API auth guard calls it once the token is accepted (a guard
 * registered globally would run before it and count rejected tokens), with the token's digest as the key.
 */
@Injectable()
export class ApiTokenRateLimiter implements ApiTokenLimiter {
  private readonly rateLimit: RateLimit;

  constructor(
    private readonly limiter: RateLimiter,
    @Inject(LIMITS_SETTINGS) settings: LimitsSettings,
  ) {
    this.rateLimit = settings.token!;
  }

  async consume(context: ExecutionContext, tokenKey: string): Promise<void> {
    await this.limiter.consume(context, 'token', tokenKey, this.rateLimit);
  }
}
