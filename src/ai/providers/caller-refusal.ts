/** What an upstream's refusal of a request sent in the caller's own dialect means (docs/decisions.md B16). */
import { InvalidRequestError, ProviderError } from '../errors';

/**
 * An upstream 4xx refusal of a native request refused the caller's own body, not one Tollgate built: it is the
 * caller's error (400, no fallback to another provider), named by status and type only, since upstream text is
 * never surfaced (docs/decisions.md B4).
 */
export function callerRefusal(error: unknown): unknown {
  if (!(error instanceof ProviderError) || error.status === undefined || error.status < 400 || error.status >= 500) return error;
  return new InvalidRequestError(`${error.message}: the upstream refused the request as the caller wrote it`, { provider: error.provider, cause: error });
}
