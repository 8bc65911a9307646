/**
 * The Response object of OpenAI's Responses API, built from the domain's answer: output items (a message
 * with its output_text, then one function_call item per call), status and incomplete_details from the finish
 * reason, usage in the Responses spelling, and the request's settings echoed as OpenAI echoes them.
 */
import type { TokenUsage, ToolCall } from '../../providers/ai-provider.interface';
import { openAiFinishReason } from '../openai/openai-responses';
import { itemId, type ResponseItem } from './responses-input';
import type { CallNames, ResponsesRequest } from './responses-requests';

export type ResponseStatus = 'completed' | 'incomplete' | 'in_progress' | 'failed';

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** What OpenAI echoes of the request in every Response object, fixed when the request arrives. */
export interface ResponseHeader {
  id: string;
  created_at: number;
  model: string;
  instructions: string | null;
  max_output_tokens: number | null;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number | null;
  text: { format: NonNullable<ResponsesRequest['text']>['format'] | { type: 'text' } };
  tool_choice: NonNullable<ResponsesRequest['tool_choice']>;
  tools: NonNullable<ResponsesRequest['tools']>;
  top_p: number | null;
  metadata: Record<string, string>;
  user: string | null;
}

export function responseHeader(request: ResponsesRequest, model: string): ResponseHeader {
  return {
    id: itemId('resp'),
    created_at: Math.floor(Date.now() / 1000),
    model,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: request.store ?? true,
    temperature: request.temperature ?? null,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? null,
    metadata: request.metadata ?? {},
    user: request.user ?? null,
  };
}

/** Counts the provider did not report are 0, as OpenAI always sends every field. */
export function responsesUsage(usage: TokenUsage | undefined): ResponsesUsage | null {
  if (!usage) return null;
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.totalTokens ?? input + output,
  };
}

/** `incomplete` with its reason when the model stopped at the token limit or a content filter; else `completed`. */
export function finishedStatus(finishReason: string | undefined): { status: ResponseStatus; incomplete_details: { reason: string } | null } {
  switch (openAiFinishReason(finishReason)) {
    case 'length':
      return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    case 'content_filter':
      return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
    default:
      return { status: 'completed', incomplete_details: null };
  }
}

export function messageOutput(id: string, text: string): ResponseItem {
  return { type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

/** A call of a namespace's function names the function and its namespace as the caller declared them. */
export function functionCallOutput(id: string, call: ToolCall, names: CallNames): ResponseItem {
  const { name, namespace } = names(call.name);
  return { type: 'function_call', id, status: 'completed', call_id: call.id, name, ...(namespace !== undefined ? { namespace } : {}), arguments: call.arguments };
}

/** The answer's output items: its text as one message (none when the model only called tools), then its calls. */
export function outputItems(text: string, toolCalls: readonly ToolCall[] | undefined, names: CallNames): ResponseItem[] {
  const items = text !== '' || !toolCalls?.length ? [messageOutput(itemId('msg'), text)] : [];
  return [...items, ...(toolCalls ?? []).map((call) => functionCallOutput(itemId('fc'), call, names))];
}

export interface ResponseState {
  status: ResponseStatus;
  output: readonly ResponseItem[];
  usage: ResponsesUsage | null;
  incomplete_details?: { reason: string } | null;
  error?: { code: string; message: string } | null;
}

/** The Response object in OpenAI's field order. */
export function responseBody(header: ResponseHeader, state: ResponseState) {
  const { id, created_at, ...settings } = header;
  return {
    id,
    object: 'response' as const,
    created_at,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    ...settings,
    output: state.output,
    truncation: 'disabled' as const,
    usage: state.usage,
  };
}

export type ResponseBody = ReturnType<typeof responseBody>;

/**
 * A Response object an upstream wrote (docs/decisions.md B19), kept as it came: its output items are the upstream's,
 * reasoning included, and only what echoes the caller's request is the caller's.
 */
export type UpstreamResponseBody = Record<string, unknown> & { id: string; output: ResponseItem[]; store: boolean };

/** What the store keeps and `GET /responses/{id}` answers: a Response Tollgate wrote, or one an upstream did. */
export type StoredResponseBody = ResponseBody | UpstreamResponseBody;
