/**
 * Upstream failures as Tollgate's typed errors: transport failures by code (never the host), non-2xx answers
 * by status, Retry-After read from the headers, and malformed JSON without the parser's message.
 */
import {
  AuthenticationError,
  ConnectionError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  RateLimitError,
  TimeoutError,
  TollgateError,
} from '../common/errors';
import type { ResponseHeaders, UpstreamErrorResponse } from './upstream-types';

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** Any transport failure becomes a ConnectionError naming only its code (never the host). */
export function mapNetworkError(error: unknown, provider: string): ConnectionError {
  const code = networkErrorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new TimeoutError(`${provider}: upstream timed out (${code})`, { provider, ...(code === 'UND_ERR_CONNECT_TIMEOUT' ? { awaiting: 'connection' as const } : {}) });
  }
  return new ConnectionError(`${provider}: could not reach upstream${code ? ` (${code})` : ''}`, { provider });
}

/** Finds a Node/undici error code, looking through `cause` and AggregateError (dual-stack connects). */
function networkErrorCode(error: unknown, depth = 0): string | undefined {
  if (depth > 3 || typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code)) return code;
  const nested = (error as { errors?: unknown[] }).errors;
  if (Array.isArray(nested) && nested.length > 0) return networkErrorCode(nested[0], depth + 1);
  return networkErrorCode((error as { cause?: unknown }).cause, depth + 1);
}

/** Default status -> error class mapping; adapters refine it with their own error codes first. */
export function mapUpstreamError(response: UpstreamErrorResponse): TollgateError {
  const { provider, status, model } = response;
  const options = { provider };
  if (status === 401 || status === 403) {
    return new AuthenticationError(`${provider}: upstream rejected the credentials (${status})`, options);
  }
  if (status === 429) {
    return new RateLimitError(`${provider}: upstream rate limit reached (429)`, {
      provider,
      retryAfterMs: retryAfterFromHeaders(response.headers),
    });
  }
  if (status === 404 && model !== undefined) {
    return modelNotAvailable(provider, model, status);
  }
  return new ProviderError(`${provider}: upstream returned ${status}`, { provider, status });
}

export function modelNotAvailable(provider: string, model: string | undefined, status: number): ModelNotAvailableError {
  const name = model !== undefined && /^[\w.:/@-]{1,200}$/.test(model) ? ` '${model}'` : '';
  return new ModelNotAvailableError(`${provider}: model${name} is not available (${status})`, { provider });
}

/**
 * Milliseconds to wait, from `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date).
 * Returns undefined when neither header is usable.
 */
export function retryAfterFromHeaders(headers: ResponseHeaders, now: number = Date.now()): number | undefined {
  const ms = firstHeader(headers['retry-after-ms']);
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  return parseRetryAfter(firstHeader(headers['retry-after']), now);
}

export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  // An HTTP date needs letters (a weekday or month); this keeps "-5" or "1e3" from parsing as a date.
  if (!/[A-Za-z]/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Parses a JSON body; a parse failure becomes InvalidResponseError without the parser's message. */
export function parseJson(raw: string, provider: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new InvalidResponseError(`${provider}: upstream returned malformed JSON`, { provider });
  }
}
