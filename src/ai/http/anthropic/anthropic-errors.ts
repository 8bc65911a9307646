/**
 * Errors of the Anthropic Messages surface in Anthropic's shape, `{"type":"error","error":{type,message}}`,
 * with Anthropic's status and type names. The status and the message come from the one mapping of the /v1 API
 * (api-error.ts), so every surface agrees on whose fault an error is and none shows upstream text; the headers
 * go along (a spent budget keeps `x-should-retry: false`, which the Anthropic SDK obeys before any delay).
 */
import { InvalidRequestError, ProviderError } from '../../errors';
import { type ApiErrorResponse, toApiError } from '../../../http/api-error';
import type { ErrorShape } from '../../../http/error-shapes';
import { AnthropicRequestError } from './anthropic-requests';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

export interface AnthropicErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: AnthropicErrorBody;
  /** Unexpected errors are logged by the filter; expected ones are not. */
  unexpected: boolean;
}

/** Paths of this surface, also under a `base_path`: errors raised before routing (404, 413, bad JSON, the 401 of the pre-auth hook) answer in its shape too. */
export function isAnthropicPath(url: string): boolean {
  const path = url.split('?', 1)[0];
  return path.endsWith('/anthropic/v1') || path.includes('/anthropic/v1/');
}

/** The exception filter's wording of errors under /anthropic/v1. */
export const ANTHROPIC_ERROR_SHAPE: ErrorShape = { handles: (request) => isAnthropicPath(request.url), answer: (error) => fromApiError(error) };

export function toAnthropicError(exception: unknown): AnthropicErrorResponse {
  if (exception instanceof AnthropicRequestError) {
    return { status: 400, headers: {}, body: errorBody('invalid_request_error', exception.message), unexpected: false };
  }
  const answer = fromApiError(toApiError(exception), exception instanceof ProviderError && exception.overloaded);
  const field = exception instanceof InvalidRequestError && exception.param !== undefined ? ANTHROPIC_FIELDS[exception.param] : undefined;
  if (field) answer.body.error.message = `${field}: ${answer.body.error.message}`;
  return answer;
}

/**
 * A provider's refusal names the domain request's parameter (`parallel_tool_calls`); a caller of this surface
 * sent it under Anthropic's name, which goes first in the message, as in Anthropic's own 400s.
 */
const ANTHROPIC_FIELDS: Record<string, string> = {
  parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
  tool_choice: 'tool_choice',
  response_format: 'output_config.format',
  temperature: 'temperature',
  top_k: 'top_k',
};

/**
 * The /v1 API's answer reworded for Anthropic clients. Anthropic has no 422: a model that cannot serve the
 * request reads as not found, as on /openai/v1. An unreachable upstream, an unavailable budget store (503) and an
 * overloaded upstream (its 529 or 503, which /v1 answers 502) are Anthropic's `overloaded_error` (529), which its
 * clients retry (Claude Code tells the user the API is overloaded); other upstream failures are `api_error`.
 */
export function fromApiError(api: ApiErrorResponse, overloaded = false): AnthropicErrorResponse {
  const status = overloaded || api.status === 503 ? 529 : api.status === 422 ? 404 : api.status;
  return { status, headers: api.headers, body: errorBody(anthropicType(status), api.message), unexpected: api.unexpected };
}

export function errorBody(type: string, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type, message } };
}

const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

function anthropicType(status: number): string {
  return TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}
