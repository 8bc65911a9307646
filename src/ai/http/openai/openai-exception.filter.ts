import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthDeniedException } from '../../../auth/auth-denial';
import { toOpenAiError } from './openai-errors';

/**
 * Every error of the OpenAI-compatible routes as an OpenAI error body, with the status the /v1 API would use;
 * AuthModule's own 401/403 bodies (with `api.auth: jwt`) are the user's configuration and go as they are.
 */
@Catch()
export class OpenAiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('OpenAiExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (exception instanceof AuthDeniedException) {
      reply.status(exception.getStatus()).send(exception.getResponse());
      return;
    }
    const error = toOpenAiError(exception);
    if (error.unexpected) {
      const name = exception instanceof Error ? exception.name : typeof exception;
      this.logger.error(`request ${request.id} failed with an unexpected ${name}`, exception instanceof Error ? exception.stack : undefined);
    }
    reply.status(error.status).headers(error.headers).send(error.body);
  }
}
