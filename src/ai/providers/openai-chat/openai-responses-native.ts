/**
 * A Responses API request a caller wrote in OpenAI's own dialect, sent on as given to an upstream that speaks it
 * (docs/decisions.md B19): reasoning items with their `encrypted_content`, `include`, `reasoning`, tools and whatever
 * else the body holds reach `POST /responses` untouched. Only what the gateway decides is set: the model routing
 * chose, `max_output_tokens` (a budget may have bounded it) and `stream`; the surface has already made the body
 * self-contained (`store: false`, the stored conversation expanded into `input`). The answer is read for the
 * domain (text, tool calls, usage: what governance and the ledger need) and kept whole beside it.
 */
import { isObject, numberOrUndefined as count } from '../../../common/json-values';
import { InvalidResponseError, ProviderError } from '../../errors';
import { tokenUsage } from './convert-usage';
import type { FinishReason, GenerateRequest, GenerateResult, GenerateStreamChunk, NativeRequest, TokenUsage, ToolCall } from '../ai-provider.interface';

/** The native request when it is in the Responses dialect. */
export function responsesNative(request: GenerateRequest): NativeRequest | undefined {
  return request.native?.dialect === 'openai-responses' ? request.native : undefined;
}

export function nativeResponsesBody(native: NativeRequest, request: GenerateRequest, model: string, stream: boolean): Record<string, unknown> {
  const { stream: _stream, ...body } = native.body;
  return {
    ...body,
    model,
    ...(request.maxTokens !== undefined ? { max_output_tokens: request.maxTokens } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

/** A Response object as the domain's result, the object itself in `native`. */
export function fromResponsesBody(body: unknown, provider: string, model: string): GenerateResult {
  if (!isObject(body) || !Array.isArray(body.output)) throw new InvalidResponseError(`${provider}: upstream response has no output list`, { provider });
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const item of body.output) {
    if (!isObject(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) if (isObject(part) && part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    } else if (item.type === 'function_call') {
      toolCalls.push({ id: String(item.call_id), name: String(item.name), arguments: typeof item.arguments === 'string' ? item.arguments : '' });
    }
  }
  const usage = responsesUsage(body.usage);
  return {
    text,
    model: typeof body.model === 'string' ? body.model : model,
    finishReason: finishReason(body, toolCalls.length > 0),
    ...(usage ? { usage } : {}),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    native: body,
  };
}

/**
 * Reads a Responses stream's events for the domain: text deltas, function calls (opened by their
 * `output_item.added`, their arguments by `function_call_arguments.delta`), and the final counts from
 * `response.completed` / `response.incomplete`. A failure event ends the stream as a provider error; its text
 * stays upstream.
 */
export class ResponsesEventReader {
  /**
   * The events the domain reads; the others (the Response snapshots of `response.created` and `in_progress`, the
   * `.done` repetitions of what the deltas said) are relayed without being parsed here.
   */
  static readonly READ = new Set([
    'response.output_text.delta',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.completed',
    'response.incomplete',
    'response.failed',
    'error',
  ]);

  /** The domain's call index of each function_call item, by item id. */
  private readonly calls = new Map<string, number>();

  constructor(
    private readonly provider: string,
    private readonly model: string,
  ) {}

  read(type: string, data: Record<string, unknown>): GenerateStreamChunk | undefined {
    switch (type) {
      case 'response.output_text.delta':
        return typeof data.delta === 'string' && data.delta !== '' ? { done: false, text: data.delta } : undefined;
      case 'response.output_item.added': {
        const item = data.item;
        if (!isObject(item) || item.type !== 'function_call') return undefined;
        const index = this.calls.size;
        this.calls.set(String(item.id), index);
        const args = typeof item.arguments === 'string' && item.arguments !== '' ? { arguments: item.arguments } : {};
        return { done: false, text: '', toolCalls: [{ index, id: String(item.call_id), name: String(item.name), ...args }] };
      }
      case 'response.function_call_arguments.delta': {
        const index = this.calls.get(String(data.item_id));
        if (index === undefined || typeof data.delta !== 'string') return undefined;
        return { done: false, text: '', toolCalls: [{ index, arguments: data.delta }] };
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = isObject(data.response) ? data.response : {};
        const usage = responsesUsage(response.usage);
        return {
          done: true,
          model: typeof response.model === 'string' ? response.model : this.model,
          finishReason: finishReason(response, this.calls.size > 0),
          ...(usage ? { usage } : {}),
        };
      }
      case 'response.failed':
      case 'error':
        throw new ProviderError(`${this.provider}: upstream reported a failure mid-stream`, { provider: this.provider });
      default:
        return undefined;
    }
  }
}

/** `incomplete` for the token limit or a content filter; tool calls; else a plain stop. */
function finishReason(response: Record<string, unknown>, called: boolean): FinishReason {
  if (response.status === 'incomplete') {
    const reason = isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return called ? 'tool_calls' : 'stop';
}

/** The Responses spelling of usage, with its cached-input and reasoning details. */
function responsesUsage(usage: unknown): TokenUsage | undefined {
  if (!isObject(usage)) return undefined;
  const cached = isObject(usage.input_tokens_details) ? count(usage.input_tokens_details.cached_tokens) : undefined;
  const reasoning = isObject(usage.output_tokens_details) ? count(usage.output_tokens_details.reasoning_tokens) : undefined;
  return tokenUsage(count(usage.input_tokens), count(usage.output_tokens), count(usage.total_tokens), cached, reasoning);
}
