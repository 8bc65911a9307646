import { ArgumentsHost, Catch, ExceptionFilter, Inject, Logger, NotFoundException, Optional } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorEnvelope, toApiError } from './api-error';
import { answeredAuthDenial, logUnexpected } from './api-filter-parts';
import type { ErrorShape } from './error-shapes';

/** The error shapes a filter that Nest builds (`@UseFilters(ApiExceptionFilter)`) takes, when a module provides them. */
export const ERROR_SHAPES = Symbol('ERROR_SHAPES');

const PROBED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The one place HTTP errors become responses (docs/decisions.md B3): the JSON envelope for everything,
 * except AuthModule's own 401/403 bodies, which are configured by the user and sent as they are, and the
 * requests of a surface with an error shape of its own (the first of `shapes` that handles them): the
 * OpenAI-compatible, Anthropic and Gemini paths in their vendor's shape, the MCP endpoint's errors before its
 * handler (a body too deep or not JSON) as JSON-RPC errors like its own refusals. The server gives it the
 * AiModule's shapes (DIALECT_ERROR_SHAPES); the /v1 controllers' own instances need none.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ApiExceptionFilter');

  constructor(@Optional() @Inject(ERROR_SHAPES) private readonly shapes: readonly ErrorShape[] = []) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (answeredAuthDenial(exception, reply)) return;
    const error = toApiError(exception);
    if (exception instanceof NotFoundException) {
      const allowed = allowedMethods(request);
      if (allowed.length > 0) {
        error.status = 405;
        error.type = 'method_not_allowed';
        error.message = `Method ${request.method} is not allowed on this path.`;
        error.headers.allow = allowed.join(', ');
      }
    }
    if (error.unexpected) logUnexpected(this.logger, request, exception);
    const shape = this.shapes.find((candidate) => candidate.handles(request));
    if (shape) {
      const shaped = shape.answer(error);
      reply.status(shaped.status).headers(shaped.headers).send(shaped.body);
      return;
    }
    reply.status(error.status).headers(error.headers).send(errorEnvelope(error, String(request.id)));
  }
}

/** Methods routed for this exact path, so a wrong method gets 405 with Allow instead of 404. */
function allowedMethods(request: FastifyRequest): string[] {
  const path = request.url.split('?', 1)[0];
  const server = request.server;
  return PROBED_METHODS.filter((method) => method !== request.method && server.findRoute({ method, url: path }) !== null);
}
