import { type ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { ApiTokenLimiter } from '../http/api-auth.guard';
import { RateLimiter } from './rate-limiter';

/**
 * The per-token limit of the /v1 API. The API auth guard calls it once the token is accepted (a guard
 * registered globally would run before it and count rejected tokens), with the token's digest as the key.
 */
@Injectable()
export class ApiTokenRateLimiter implements ApiTokenLimiter {
  constructor(private readonly limiter: RateLimiter) {}

  async consume(context: ExecutionContext, tokenKey: string): Promise<void> {
    const limit = this.limiter.limitFor('token', context.switchToHttp().getRequest<FastifyRequest>().url);
    if (limit) await this.limiter.consume(context, limit, tokenKey);
  }
}
