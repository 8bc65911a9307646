/**
 * Errors of the OpenAI-compatible surface in OpenAI's shape, `{"error":{message,type,param,code}}`. The
 * status and the message come from the one mapping of the /v1 API (api-error.ts), so both surfaces agree
 * on what is whose fault and neither shows upstream text; only the wording of `type` and `code` differs.
 */
import { InvalidRequestError, ProviderError } from '../../errors';
import { type ApiErrorResponse, toApiError } from '../../../http/api-error';
import type { ErrorShape } from '../../../http/error-shapes';
import { OpenAiRequestError } from './openai-requests';

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface OpenAiErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: OpenAiErrorBody;
  /** Unexpected errors are logged by the filter; expected ones are not. */
  unexpected: boolean;
}

/** Tollgate's types that OpenAI spells its own way, with the status OpenAI answers them with. */
const OPENAI_CODES: Record<string, { code: string; status?: number }> = {
  authentication_required: { code: 'invalid_api_key' },
  invalid_key: { code: 'invalid_api_key' },
  model_not_available: { code: 'model_not_found', status: 404 },
  rate_limited: { code: 'rate_limit_exceeded' },
  budget_exceeded: { code: 'budget_exceeded' },
};

/** Paths of this surface, also under a `base_path`: errors raised before routing (404, 405, 413, bad JSON) answer in its shape too. */
export function isOpenAiPath(url: string): boolean {
  const path = url.split('?', 1)[0];
  return path.endsWith('/openai/v1') || path.includes('/openai/v1/');
}

/** The exception filter's wording of errors under /openai/v1. */
export const OPENAI_ERROR_SHAPE: ErrorShape = { handles: (request) => isOpenAiPath(request.url), answer: fromApiError };

/** Types whose cause is the `model` the caller chose. */
const MODEL_TYPES = new Set(['unknown_provider', 'capability_not_supported', 'model_not_available', 'model_not_found', 'model_not_allowed', 'model_not_priced']);

export function toOpenAiError(exception: unknown): OpenAiErrorResponse {
  if (exception instanceof OpenAiRequestError) {
    return {
      status: exception.status,
      headers: {},
      body: { error: { message: exception.message, type: 'invalid_request_error', param: exception.param, code: exception.code } },
      unexpected: false,
    };
  }
  const answer = fromApiError(toApiError(exception));
  if (exception instanceof InvalidRequestError && exception.param !== undefined) answer.body.error.param = exception.param;
  // An overloaded upstream is the 503 OpenAI answers when it is overloaded itself (/v1 answers 502).
  if (exception instanceof ProviderError && exception.overloaded) answer.status = 503;
  return answer;
}

/** The /v1 API's answer to an error, reworded for OpenAI clients. */
export function fromApiError(api: ApiErrorResponse): OpenAiErrorResponse {
  const known = OPENAI_CODES[api.type];
  const status = known?.status ?? api.status;
  return {
    status,
    headers: api.headers,
    body: {
      error: {
        message: api.message,
        type: openAiType(status, api.type),
        param: MODEL_TYPES.has(api.type) ? 'model' : null,
        code: known?.code ?? api.type,
      },
    },
    unexpected: api.unexpected,
  };
}

/**
 * OpenAI's own categories: `insufficient_quota` for a spent budget (what OpenAI answers when a quota is used
 * up), `requests` for request-rate limits, `server_error` for anything on the server's side.
 */
function openAiType(status: number, type: string): string {
  if (type === 'budget_exceeded') return 'insufficient_quota';
  if (status === 429) return 'requests';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}
