import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { getTenantId } from '../auth/request-context';
import { LIMITS_SETTINGS } from './limits.constants';
import type { LimitsSettings, RateLimit } from './limits-settings';
import { RateLimiter } from './rate-limiter';

/**
 * Counts requests per tenant of AuthModule's request context. Registered as an APP_GUARD after AuthModule's
 * guards, so only requests that authenticated (and passed RBAC) are counted; requests without a tenant id
 * (public routes, the /v1 API on its own token, tokens without the claim) pass uncounted, synchronously.
 */
@Injectable()
export class TenantRateLimitGuard implements CanActivate {
  private readonly rateLimit: RateLimit;

  constructor(
    private readonly limiter: RateLimiter,
    @Inject(LIMITS_SETTINGS) settings: LimitsSettings,
  ) {
    this.rateLimit = settings.tenant!;
  }

  canActivate(context: ExecutionContext): boolean | Promise<true> {
    if (context.getType() !== 'http') return true;
    const tenantId = getTenantId(context.switchToHttp().getRequest<object>());
    if (tenantId === undefined) return true;
    return this.limiter.consume(context, 'tenant', String(tenantId), this.rateLimit);
  }
}
