import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answeredAuthDenial, logUnexpected } from '../../../http/api-filter-parts';
import { toAnthropicError } from './anthropic-errors';

/**
 * Every error of the Anthropic Messages routes as an Anthropic error body, with the status the /v1 API would
 * use in Anthropic's names; AuthModule's own 401/403 bodies (with `api.auth: jwt`) are the user's
 * configuration and go as they are.
 */
@Catch()
export class AnthropicExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('AnthropicExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (answeredAuthDenial(exception, reply)) return;
    const error = toAnthropicError(exception);
    if (error.unexpected) logUnexpected(this.logger, request, exception);
    reply.status(error.status).headers({ ...error.headers, 'request-id': String(request.id) }).send(error.body);
  }
}
