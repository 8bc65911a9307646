/**
 * The Messages API request a caller wrote in Anthropic's own dialect, sent on as given (docs/decisions.md B16):
 * thinking blocks and their signatures, `cache_control` wherever it was put, `context_management`,
 * `output_config`, server tools, documents, tool fields and whatever else the body holds reach the upstream
 * untouched. Only what the gateway decides is set: the model routing chose, `max_tokens` (a budget may have
 * bounded it, and then `thinking.budget_tokens` with it) and `stream`.
 */
import { isObject } from '../../../common/json-values';
import type { GenerateRequest, NativeRequest } from '../ai-provider.interface';

/** The caller's headers of the dialect that go upstream; the key is the registration's own. */
export const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

export function nativeMessagesBody(native: NativeRequest, request: GenerateRequest, model: string, stream: boolean): Record<string, unknown> {
  const { body } = native;
  const thinking = request.maxTokens !== undefined ? boundedThinking(body.thinking, body.max_tokens, request.maxTokens) : undefined;
  // `stream: undefined` is left out when the body is written: one copy of the body, no rest destructuring.
  return {
    ...body,
    model,
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(thinking ? { thinking } : {}),
    stream: stream ? true : undefined,
  };
}

/** The API's least `thinking.budget_tokens`. */
const LEAST_THINKING_BUDGET = 1024;

/**
 * The thinking setting for a max_tokens a budget lowered (`granted`), when the caller's budget_tokens no longer
 * fits below it (the API refuses budget_tokens >= max_tokens): the thinking keeps the share of max_tokens the
 * caller gave it, at least the API's 1,024 and below `granted` (the gate grants a thinking call at least 1,025).
 * Undefined when the caller's setting stands.
 */
function boundedThinking(thinking: unknown, asked: unknown, granted: number): Record<string, unknown> | undefined {
  if (!isObject(thinking) || thinking.type !== 'enabled' || typeof thinking.budget_tokens !== 'number' || typeof asked !== 'number') return undefined;
  if (thinking.budget_tokens < granted || granted >= asked) return undefined;
  const share = Math.floor((thinking.budget_tokens * granted) / asked);
  return { ...thinking, budget_tokens: Math.min(granted - 1, Math.max(LEAST_THINKING_BUDGET, share)) };
}

/** The native request when it is in this adapter's dialect. */
export function anthropicNative(request: GenerateRequest): NativeRequest | undefined {
  return request.native?.dialect === 'anthropic-messages' ? request.native : undefined;
}
