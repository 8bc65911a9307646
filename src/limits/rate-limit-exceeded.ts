import { HttpException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

/**
 * The 429 of a Tollgate limit: `Retry-After` on the reply (seconds, at least 1) and a message naming the
 * limit, which the exception filter puts in the error envelope as `rate_limited`.
 */
export function rateLimitExceeded(reply: FastifyReply, description: string, limit: number, windowMs: number, retryAfterSeconds: number): HttpException {
  const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
  reply.header('retry-after', String(retryAfter));
  return new HttpException(
    { message: `The ${description} (${limit} per ${formatWindow(windowMs)}) is reached; retry after ${retryAfter} s.`, tollgate: true },
    429,
  );
}

function formatWindow(windowMs: number): string {
  return windowMs % 1000 === 0 ? `${windowMs / 1000} s` : `${windowMs} ms`;
}
