import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { getTenantId } from '../auth/request-context';
import { RateLimiter } from './rate-limiter';

/**
 * Counts requests per tenant of AuthModule's request context. Registered as an APP_GUARD after AuthModule's
 * guards, so only requests that authenticated (and passed RBAC) are counted; requests without a tenant id
 * (public routes, the /v1 API on its own token, tokens without the claim) pass uncounted, synchronously.
 */
@Injectable()
export class TenantRateLimitGuard implements CanActivate {
  constructor(private readonly limiter: RateLimiter) {}

  canActivate(context: ExecutionContext): boolean | Promise<true> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const tenantId = getTenantId(request);
    if (tenantId === undefined) return true;
    const limit = this.limiter.limitFor('tenant', request.url);
    return limit ? this.limiter.consume(context, limit, String(tenantId)) : true;
  }
}
