import { HttpException } from '@nestjs/common';
import {
  AuthenticationError,
  CapabilityNotSupportedError,
  ConnectionError,
  InvalidRequestError,
  InvalidResponseError,
  ModelNotAvailableError,
  ModelNotFoundError,
  NoHealthyDeploymentError,
  ProviderError,
  RateLimitError,
  TimeoutError,
  TollgateError,
  UnknownProviderError,
} from '../common/errors';
import { AdminRequiredError, InvalidKeyError, KeyNotFoundError, ModelNotAllowedError, ModelNotPricedError } from '../governance/governance-errors';
import { BudgetExceededError, BudgetStoreUnavailableError, RateLimitExceededError } from '../governance/budgets/budget-errors';

/** What the REST API answers for an error: one place maps every error to a status (docs/decisions.md B3). */
export interface ApiErrorResponse {
  status: number;
  type: string;
  message: string;
  headers: Record<string, string>;
  /** Unexpected errors are logged (without request data); expected ones are not. */
  unexpected: boolean;
}

const HTTP_STATUS_TYPES: Record<number, { type: string; message: string }> = {
  400: { type: 'invalid_request', message: 'The request is invalid.' },
  401: { type: 'authentication_required', message: 'Authentication required.' },
  403: { type: 'forbidden', message: 'Access denied.' },
  404: { type: 'not_found', message: 'No route matches this path.' },
  405: { type: 'method_not_allowed', message: 'Method not allowed on this path.' },
  413: { type: 'payload_too_large', message: 'The request body exceeds the size limit.' },
  415: { type: 'unsupported_media_type', message: 'Request bodies must be application/json.' },
  429: { type: 'rate_limited', message: 'Too many requests.' },
};

/** Provider errors keep Tollgate's own message (never an upstream body); the status says whose fault it is. */
function tollgateErrorStatus(error: TollgateError): number {
  if (error instanceof InvalidRequestError || error instanceof UnknownProviderError) return 400;
  if (error instanceof CapabilityNotSupportedError) return 400;
  if (error instanceof InvalidKeyError) return 401;
  if (error instanceof ModelNotAllowedError || error instanceof ModelNotPricedError || error instanceof AdminRequiredError) return 403;
  if (error instanceof KeyNotFoundError) return 404;
  if (error instanceof RateLimitError || error instanceof BudgetExceededError || error instanceof RateLimitExceededError) return 429;
  if (error instanceof BudgetStoreUnavailableError || error instanceof NoHealthyDeploymentError) return 503;
  if (error instanceof ModelNotAvailableError) return 422;
  if (error instanceof ModelNotFoundError) return 404;
  if (error instanceof AuthenticationError) return 502;
  if (error instanceof ProviderError || error instanceof InvalidResponseError) return 502;
  if (error instanceof TimeoutError) return 504;
  if (error instanceof ConnectionError) return 503;
  return 500;
}

/**
 * A refused credential stays refused, so `x-should-retry: false` tells the clients that would retry it not to:
 * Claude Code retries a 401 ten times over about three minutes without it, once with it (issue 28).
 */
const UNAUTHENTICATED_HEADERS = { 'www-authenticate': 'Bearer', 'x-should-retry': 'false' } as const;

export function toApiError(error: unknown): ApiErrorResponse {
  if (error instanceof TollgateError) {
    const status = tollgateErrorStatus(error);
    const headers: Record<string, string> = {};
    if ((error instanceof RateLimitError || error instanceof NoHealthyDeploymentError) && error.retryAfterMs !== undefined) {
      headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
    }
    if (status === 401) Object.assign(headers, UNAUTHENTICATED_HEADERS);
    if (error instanceof BudgetExceededError || error instanceof RateLimitExceededError) Object.assign(headers, resetHeaders(error, Date.now()));
    if (status === 500) return internalError(true);
    return { status, type: error.type, message: error.message, headers, unexpected: false };
  }
  if (error instanceof HttpException) return fromHttpException(error);
  return internalError(true);
}

/**
 * When the caller may come back. An RPM/TPM refusal is retryable: `Retry-After` is the seconds to the minute's
 * end. A spent budget is final until `X-Budget-Reset` (ISO time), which can be a month away, a wait no client
 * should sleep through: `x-should-retry: false` stops the OpenAI and Anthropic SDKs, which read it before any
 * delay, and `retry-after-ms: 0` turns the two retries the `ai` SDK makes of every 429 into immediate refusals
 * instead of a 6 s back-off (docs/decisions.md D8). No `Retry-After`, which other clients sleep through.
 */
function resetHeaders(error: BudgetExceededError | RateLimitExceededError, now: number): Record<string, string> {
  if (error instanceof BudgetExceededError) return { 'x-should-retry': 'false', 'retry-after-ms': '0', 'x-budget-reset': error.resetAt.toISOString() };
  return { 'retry-after': String(Math.max(1, Math.ceil((error.resetAt.getTime() - now) / 1000))) };
}

function fromHttpException(error: HttpException): ApiErrorResponse {
  const status = error.getStatus();
  if (status >= 500) return internalError(status === 500);
  const known = HTTP_STATUS_TYPES[status] ?? { type: 'invalid_request', message: 'The request is invalid.' };
  const headers: Record<string, string> = status === 401 ? { ...UNAUTHENTICATED_HEADERS } : {};
  const body = error.getResponse();
  // Nest wraps Fastify's JSON parser failure as a 400 whose message names the parser; never echo it.
  if (status === 400 && isJsonParseFailure(error, body)) {
    return { status, type: 'invalid_json', message: 'The request body is not valid JSON.', headers, unexpected: false };
  }
  return { status, type: known.type, message: ownMessage(body) ?? known.message, headers, unexpected: false };
}

/** Messages Tollgate wrote itself (DTO validation, explicit throws) are safe to show; framework text is not. */
function ownMessage(body: string | object): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { message, tollgate } = body as { message?: unknown; tollgate?: unknown };
  if (tollgate !== true) return undefined;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : undefined;
}

function isJsonParseFailure(error: HttpException, body: string | object): boolean {
  const text = `${error.message} ${typeof body === 'string' ? body : JSON.stringify(body)}`;
  return /JSON|Unexpected token|Unexpected end|FST_ERR_CTP_(INVALID_JSON|EMPTY_JSON)/i.test(text);
}

function internalError(unexpected: boolean): ApiErrorResponse {
  return { status: 500, type: 'internal_error', message: 'Internal server error.', headers: {}, unexpected };
}

/** Errors Tollgate raises itself in controllers carry `tollgate: true` so their text may be shown. */
export function apiRequestError(status: 400 | 403 | 404 | 413, message: string): HttpException {
  return new HttpException({ message, tollgate: true }, status);
}

export function errorEnvelope(error: ApiErrorResponse, requestId: string) {
  return { error: { type: error.type, message: error.message }, request_id: requestId };
}
