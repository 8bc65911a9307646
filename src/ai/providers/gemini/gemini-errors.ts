import { isObject } from '../../../common/json-values';
import { AuthenticationError, ProviderError, RateLimitError, TollgateError } from '../../errors';
import { modelNotAvailable, retryAfterFromHeaders } from '../../../upstream/upstream-errors';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';
import { enumToken } from './gemini-wire';

/** Gemini's `{"error":{"code","message","status","details"}}`: only `status` and detail reasons are read. */
function errorFields(body: unknown): { status?: string; reasons: string[]; retryDelayMs?: number } {
  const reasons: string[] = [];
  if (!isObject(body) || !isObject(body.error)) return { reasons };
  let retryDelayMs: number | undefined;
  if (Array.isArray(body.error.details)) {
    for (const detail of body.error.details) {
      if (!isObject(detail)) continue;
      const reason = enumToken(detail.reason);
      if (reason) reasons.push(reason);
      // google.rpc.RetryInfo carries the wait as a protobuf Duration string such as "37s" or "0.5s".
      if (typeof detail.retryDelay === 'string' && /^\d+(\.\d+)?s$/.test(detail.retryDelay)) {
        retryDelayMs = Math.ceil(Number(detail.retryDelay.slice(0, -1)) * 1000);
      }
    }
  }
  return { status: enumToken(body.error.status), reasons, retryDelayMs };
}

/** A wrong key is a 400 with reason API_KEY_INVALID here, not a 401. */
export function mapGeminiError(response: UpstreamErrorResponse): TollgateError {
  const { provider, status, headers, model } = response;
  const fields = errorFields(response.body);
  const label = fields.status ? `${status} ${fields.status}` : `${status}`;
  if (
    status === 401 ||
    status === 403 ||
    fields.reasons.includes('API_KEY_INVALID') ||
    fields.status === 'UNAUTHENTICATED' ||
    fields.status === 'PERMISSION_DENIED'
  ) {
    return new AuthenticationError(`${provider}: upstream rejected the credentials (${label})`, { provider });
  }
  if (status === 429 || fields.status === 'RESOURCE_EXHAUSTED') {
    return new RateLimitError(`${provider}: upstream rate limit reached (${label})`, {
      provider,
      retryAfterMs: retryAfterFromHeaders(headers) ?? fields.retryDelayMs,
    });
  }
  if ((status === 404 || fields.status === 'NOT_FOUND') && model !== undefined) {
    return modelNotAvailable(provider, model, status);
  }
  return new ProviderError(`${provider}: upstream returned ${label}`, { provider, status });
}
