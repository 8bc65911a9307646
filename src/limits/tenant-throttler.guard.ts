import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { FastifyReply } from 'fastify';
import { getTenantId } from '../auth/request-context';
import { rateLimitExceeded } from './rate-limit-exceeded';

/**
 * Counts requests per tenant of AuthModule's request context. Registered as an APP_GUARD after AuthModule's
 * guards, so only requests that authenticated (and passed RBAC) are counted; requests without a tenant id
 * (public routes, the /v1 API on its own token, tokens without the claim) are not limited here.
 */
@Injectable()
export class TenantThrottlerGuard extends ThrottlerGuard {
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return context.getType() !== 'http' || getTenantId(context.switchToHttp().getRequest()) === undefined;
  }

  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    return String(getTenantId(request));
  }

  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    throw rateLimitExceeded(reply, 'tenant', detail.limit, detail.ttl, detail.timeToBlockExpire);
  }
}
