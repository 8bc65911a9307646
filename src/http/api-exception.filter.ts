import { ArgumentsHost, Catch, ExceptionFilter, Logger, NotFoundException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isMcpRoute, jsonRpcErrorFor } from '../ai/mcp/mcp-json-rpc-error';
import { errorEnvelope, toApiError } from './api-error';
import { answeredAuthDenial, logUnexpected } from './api-filter-parts';
import { fromApiError, isOpenAiPath } from '../ai/http/openai/openai-errors';
import { fromApiError as fromApiErrorForAnthropic, isAnthropicPath } from '../ai/http/anthropic/anthropic-errors';
import { fromApiError as fromApiErrorToGemini, isGeminiPath } from '../ai/http/gemini/gemini-errors';

const PROBED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The one place HTTP errors become responses (docs/decisions.md B3): the JSON envelope for everything,
 * except AuthModule's own 401/403 bodies, which are configured by the user and sent as they are, paths
 * of the OpenAI-compatible, Anthropic and Gemini surfaces, which get their vendor's error shape, and the MCP endpoint, whose errors
 * before its handler (a body too deep or not JSON) are JSON-RPC errors like its own refusals.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ApiExceptionFilter');

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
    if (isMcpRoute(request)) {
      reply.status(error.status).headers(error.headers).send(jsonRpcErrorFor(error));
      return;
    }
    if (isOpenAiPath(request.url)) {
      const openAi = fromApiError(error);
      reply.status(openAi.status).headers(openAi.headers).send(openAi.body);
      return;
    }
    if (isAnthropicPath(request.url)) {
      const anthropic = fromApiErrorForAnthropic(error);
      reply.status(anthropic.status).headers(anthropic.headers).send(anthropic.body);
      return;
    }
    if (isGeminiPath(request.url)) {
      const gemini = fromApiErrorToGemini(error);
      reply.status(gemini.status).headers(gemini.headers).send(gemini.body);
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
