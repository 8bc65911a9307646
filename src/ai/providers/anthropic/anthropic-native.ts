/**
 * The Messages API request a caller wrote in Anthropic's own dialect, sent on as given (docs/decisions.md B16):
 * thinking blocks and their signatures, `cache_control` wherever it was put, `context_management`,
 * `output_config`, tool fields and whatever else the body holds reach the upstream untouched. Only what the
 * gateway decides is set: the model routing chose, `max_tokens` (a budget may have bounded it) and `stream`.
 */
import type { GenerateRequest, NativeRequest } from '../ai-provider.interface';

/** The caller's headers of the dialect that go upstream; the key is the registration's own. */
export const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

export function nativeMessagesBody(native: NativeRequest, request: GenerateRequest, model: string, stream: boolean): Record<string, unknown> {
  const { stream: _stream, ...body } = native.body;
  return {
    ...body,
    model,
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

/** The native request when it is in this adapter's dialect. */
export function anthropicNative(request: GenerateRequest): NativeRequest | undefined {
  return request.native?.dialect === 'anthropic-messages' ? request.native : undefined;
}
