import type { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthDeniedException } from '../auth/auth-denial';

/**
 * AuthModule's own 401/403 (with `api.auth: jwt`) go out as the user configured them, in both API shapes.
 * True when the exception was such a denial and has been answered.
 */
export function answeredAuthDenial(exception: unknown, reply: FastifyReply): boolean {
  if (!(exception instanceof AuthDeniedException)) return false;
  reply.status(exception.getStatus()).send(exception.getResponse());
  return true;
}

/** An error no mapping expected: logged once with the request id and the stack, never the request itself. */
export function logUnexpected(logger: Logger, request: FastifyRequest, exception: unknown): void {
  const name = exception instanceof Error ? exception.name : typeof exception;
  logger.error(`request ${request.id} failed with an unexpected ${name}`, exception instanceof Error ? exception.stack : undefined);
}
