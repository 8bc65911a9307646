import { isObject } from '../../../common/json-values';
import { AuthenticationError, ProviderError, RateLimitError, TollgateError } from '../../errors';
import { modelNotAvailable, retryAfterFromHeaders } from '../../../upstream/upstream-errors';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';

/** Anthropic's own error `type` (validated as a plain token so nothing else of the body leaks). */
export function anthropicErrorType(body: unknown): string | undefined {
  if (!isObject(body) || !isObject(body.error)) return undefined;
  const type = body.error.type;
  return typeof type === 'string' && /^[a-z_]{1,64}$/.test(type) ? type : undefined;
}

/** Status and `error.type` -> Tollgate error. */
export function mapAnthropicError(response: UpstreamErrorResponse): TollgateError {
  const { provider, status, headers, model } = response;
  const type = anthropicErrorType(response.body);
  const label = type ? `${status} ${type}` : `${status}`;
  if (status === 401 || status === 403 || type === 'authentication_error' || type === 'permission_error') {
    return new AuthenticationError(`${provider}: upstream rejected the credentials (${label})`, { provider });
  }
  if (status === 429 || type === 'rate_limit_error') {
    return new RateLimitError(`${provider}: upstream rate limit reached (${label})`, {
      provider,
      retryAfterMs: retryAfterFromHeaders(headers),
    });
  }
  if ((status === 404 || type === 'not_found_error') && model !== undefined) {
    return modelNotAvailable(provider, model, status);
  }
  // 529 overloaded_error and 500 api_error are provider-side; 400/413 are requests it refused.
  return new ProviderError(`${provider}: upstream returned ${label}`, { provider, status });
}
