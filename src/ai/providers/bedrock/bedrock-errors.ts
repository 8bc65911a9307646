/**
 * Bedrock's errors: `{"message": "..."}` with the exception's name in `x-amzn-errortype` (`ThrottlingException:http://...`),
 * or, inside a stream, in the `:exception-type` header (camel-cased: `throttlingException`). Only the name is read.
 */
import { AuthenticationError, ProviderError, RateLimitError, type TollgateError } from '../../errors';
import { firstHeader, mapUpstreamError, modelNotAvailable, retryAfterFromHeaders } from '../../../upstream/upstream-errors';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';

const AUTH = new Set(['AccessDeniedException', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException', 'IncompleteSignatureException']);
const RATE = new Set(['ThrottlingException', 'ServiceQuotaExceededException', 'ModelNotReadyException']);

/** `ThrottlingException` from the header or a stream's `throttlingException`; undefined when it is not a plain name. */
export function bedrockExceptionName(value: string | undefined): string | undefined {
  const name = value?.split(':', 1)[0];
  return name !== undefined && /^[A-Za-z]{1,64}$/.test(name) ? name.charAt(0).toUpperCase() + name.slice(1) : undefined;
}

export function mapBedrockError(response: UpstreamErrorResponse, exception?: string): TollgateError {
  const { provider, status, model } = response;
  const name = exception ?? bedrockExceptionName(firstHeader(response.headers['x-amzn-errortype']));
  const label = name ? `${status} ${name}` : `${status}`;
  if (name && AUTH.has(name)) return new AuthenticationError(`${provider}: upstream rejected the credentials (${label})`, { provider });
  if (name && RATE.has(name)) {
    return new RateLimitError(`${provider}: upstream rate limit reached (${label})`, { provider, retryAfterMs: retryAfterFromHeaders(response.headers) });
  }
  if (name === 'ResourceNotFoundException' && model !== undefined) return modelNotAvailable(provider, model, status);
  if (name) return new ProviderError(`${provider}: upstream returned ${label}`, { provider, status });
  return mapUpstreamError(response);
}

/** An exception message after the 200: the status its HTTP answer would have had, for the mapping above. */
export function mapBedrockStreamException(provider: string, model: string, type: string): TollgateError {
  const name = bedrockExceptionName(type) ?? 'InternalServerException';
  const status = RATE.has(name) ? 429 : name === 'ValidationException' ? 400 : name === 'ModelStreamErrorException' ? 424 : 500;
  return mapBedrockError({ provider, status, headers: {}, body: undefined, model }, name);
}
