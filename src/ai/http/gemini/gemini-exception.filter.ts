import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answeredAuthDenial, logUnexpected } from '../../../http/api-filter-parts';
import { toGeminiError } from './gemini-errors';

/**
 * Every error of Gemini's routes as Google's error body, with the status the /v1 API would use; AuthModule's
 * own 401/403 bodies (with `api.auth: jwt`) are the user's configuration and go as they are.
 */
@Catch()
export class GeminiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('GeminiExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (answeredAuthDenial(exception, reply)) return;
    const error = toGeminiError(exception);
    if (error.unexpected) logUnexpected(this.logger, request, exception);
    reply.status(error.status).headers(error.headers).send(error.body);
  }
}
