/**
 * The Messages API request a caller wrote in Anthropic's own dialect, sent on as given (docs/decisions.md B16):
 * thinking blocks and their signatures, `cache_control` wherever it was put, `context_management`,
 * `output_config`, server tools, documents, tool fields and whatever else the body holds reach the upstream
 * untouched. Only what the gateway decides is set: the model routing chose, `max_tokens` (a budget may have
 * bounded it, and then `thinking.budget_tokens` with it) and `stream`.
 */
import { isObject } from '../../../common/json-values';
import { parseEventObject, readSseEventBatches } from '../../../upstream/stream-framing';
import { InvalidResponseError } from '../../errors';
import type { GenerateRequest, GenerateStreamChunk, NativeEvent, NativeRequest } from '../ai-provider.interface';
import { AnthropicStreamTranslator } from './anthropic-stream';

/** The caller's headers of the dialect that go upstream; the key is the registration's own. */
export const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

/**
 * The dialect's headers the caller sent, of those `names`: `anthropic-version` replaces the pinned one at Anthropic,
 * since the body is written for it (Vertex takes its version in the body, so it is sent the betas only).
 */
export function forwardedHeaders(native: NativeRequest, names: readonly string[] = FORWARDED_HEADERS): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of names) if (native.headers[name] !== undefined) headers[name] = native.headers[name];
  return headers;
}

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

const UNREAD_NATIVE_EVENTS: ReadonlySet<string> = new Set(['ping', 'content_block_stop']);

/**
 * A native stream's chunks: every upstream event rides, as it arrived, on the chunk of the first event after it
 * that the domain reads, within what one read of the body completed; the events of a read that translate to
 * nothing (`message_start`, block starts and ends, pings, thinking deltas) go on one chunk of empty text at its
 * end. So each read is relayed in as few steps as it holds answer pieces, and no event waits for a later read.
 */
export async function* nativeChunks(body: AsyncIterable<Buffer | string>, provider: string, model: string): AsyncIterable<GenerateStreamChunk> {
  const translator = new AnthropicStreamTranslator(provider, model);
  for await (const batch of readSseEventBatches(body, provider)) {
    let arrived: NativeEvent[] = [];
    for (const event of batch) {
      // Pings and block ends carry nothing the domain reads (no JSON-output tool here): not parsed.
      const unread = event.event !== undefined && UNREAD_NATIVE_EVENTS.has(event.event);
      let chunks: GenerateStreamChunk[];
      try {
        const data = unread ? undefined : parseEventObject(event.data, provider);
        chunks = data ? translator.translate(data) : [];
        arrived.push({ event: event.event ?? String(data?.type), data: event.data });
      } catch (error) {
        // An error event (or an unreadable one) ends the stream after everything that came before it.
        if (arrived.length > 0) yield { done: false, text: '', native: arrived };
        throw error;
      }
      if (chunks.length === 0) continue;
      chunks[0].native = arrived;
      arrived = [];
      for (const chunk of chunks) {
        yield chunk;
        if (chunk.done) return;
      }
    }
    if (arrived.length > 0) yield { done: false, text: '', native: arrived };
  }
  throw new InvalidResponseError(`${provider}: upstream stream ended before message_stop`, { provider });
}
