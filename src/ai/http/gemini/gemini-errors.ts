/**
 * Errors of Gemini's surface in Google's shape, `{"error":{code, message, status, details?}}`. The HTTP status
 * and the message come from the one mapping of the /v1 API (api-error.ts), so every surface agrees on whose
 * fault an error is and none shows upstream text; Google's canonical status names the category. A spent budget
 * carries a google.rpc.QuotaFailure whose quotaId names its period and a RetryInfo until its reset: Gemini CLI
 * stops at once on a quotaId with `PerDay`, and on a retry delay over five minutes (a monthly budget), instead
 * of retrying for minutes.
 */
import { AuthenticationError, InvalidRequestError, InvalidResponseError, ProviderError } from '../../errors';
import { type ApiErrorResponse, toApiError } from '../../../http/api-error';
import type { ErrorShape } from '../../../http/error-shapes';
import { BudgetExceededError, RateLimitExceededError } from '../../../governance/budgets/budget-errors';
import { GeminiRequestError } from './gemini-requests';

export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: object[] };
}

export interface GeminiErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: GeminiErrorBody;
  /** Unexpected errors are logged by the filter; expected ones are not. */
  unexpected: boolean;
}

/** Google's canonical codes by HTTP status (google.rpc.Code's HTTP mapping). */
const GOOGLE_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Tollgate's types that Google answers with another status: a model that is not there is 404. */
const STATUS_OF_TYPE: Record<string, number> = { model_not_available: 404 };

/** Paths of this surface, also under a `base_path`: errors raised before routing (404, 413, bad JSON) answer in its shape too. */
export function isGeminiPath(url: string): boolean {
  const path = url.split('?', 1)[0];
  return path.endsWith('/gemini/v1beta') || path.includes('/gemini/v1beta/');
}

/** The exception filter's wording of errors under /gemini/v1beta. */
export const GEMINI_ERROR_SHAPE: ErrorShape = { handles: (request) => isGeminiPath(request.url), answer: (error) => fromApiError(error) };

export function toGeminiError(exception: unknown): GeminiErrorResponse {
  if (exception instanceof GeminiRequestError) {
    return { status: 400, headers: {}, body: { error: { code: 400, message: exception.message, status: 'INVALID_ARGUMENT' } }, unexpected: false };
  }
  const answer = fromApiError(toApiError(exception), upstreamFailureStatus(exception));
  const details = quotaDetails(exception);
  if (details) answer.body.error.details = details;
  const field = exception instanceof InvalidRequestError && exception.param !== undefined ? GEMINI_FIELDS[exception.param] : undefined;
  if (field !== undefined) answer.body.error.message = `${answer.body.error.message} (field '${field}')`;
  return answer;
}

/** The domain's request fields (OpenAI's names, which adapters refuse by) as this surface names them. */
const GEMINI_FIELDS: Record<string, string> = {
  model: 'model',
  tool_choice: 'toolConfig.functionCallingConfig.mode',
  temperature: 'generationConfig.temperature',
  seed: 'generationConfig.seed',
  response_format: 'generationConfig.responseMimeType',
};

/**
 * An upstream's failure, which /v1 answers 502, in the status Google would give it, since Gemini CLI retries
 * every 5xx (five times, with back-off) and stops on a 4xx: a request the provider refused (its 4xx, a blocked
 * prompt) is the caller's INVALID_ARGUMENT; credentials the provider refused are PERMISSION_DENIED (the
 * gateway may not use that model; retrying changes nothing); a malformed answer is INTERNAL; only the
 * provider's own failure (5xx, or a failure mid-stream) is UNAVAILABLE, worth a retry. Unreachable (503) and
 * timed out (504, DEADLINE_EXCEEDED) stay as on /v1: both are retryable.
 */
function upstreamFailureStatus(exception: unknown): number | undefined {
  if (exception instanceof ProviderError) return exception.status !== undefined && exception.status < 500 ? 400 : 503;
  if (exception instanceof AuthenticationError) return 403;
  if (exception instanceof InvalidResponseError) return 500;
  return undefined;
}

/** The /v1 API's answer to an error, reworded for Google's clients; `upstreamStatus` replaces /v1's 502. */
export function fromApiError(api: ApiErrorResponse, upstreamStatus?: number): GeminiErrorResponse {
  const status = upstreamStatus ?? STATUS_OF_TYPE[api.type] ?? api.status;
  return {
    status,
    headers: api.headers,
    body: { error: { code: status, message: api.message, status: GOOGLE_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } },
    unexpected: api.unexpected,
  };
}

const QUOTA_FAILURE = 'type.googleapis.com/google.rpc.QuotaFailure';
const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const PERIOD_QUOTA = { day: 'PerDay', month: 'PerMonth', minute: 'PerMinute' } as const;

/**
 * A governance refusal's details as Google sends a quota refusal: which quota (`Tollgate<Budget|Rate>Per<Period>`
 * with the scope, a key's or a tenant's), until when, and why.
 */
function quotaDetails(exception: unknown): object[] | undefined {
  if (!(exception instanceof BudgetExceededError) && !(exception instanceof RateLimitExceededError)) return undefined;
  const budget = exception instanceof BudgetExceededError;
  const period = PERIOD_QUOTA[exception.scope.period];
  const quotaId = `Tollgate${budget ? 'Budget' : 'Rate'}${period}-${exception.scope.kind}`;
  const seconds = Math.max(1, Math.ceil((exception.resetAt.getTime() - Date.now()) / 1000));
  return [
    { '@type': QUOTA_FAILURE, violations: [{ subject: `${exception.scope.kind}:${exception.scope.id}`, description: exception.message, quotaId, quotaMetric: `tollgate/${exception.field}` }] },
    { '@type': ERROR_INFO, reason: budget ? 'BUDGET_EXCEEDED' : 'RATE_LIMIT_EXCEEDED', domain: 'tollgate', metadata: { quota_limit: quotaId, reset_at: exception.resetAt.toISOString() } },
    { '@type': RETRY_INFO, retryDelay: `${seconds}s` },
  ];
}
