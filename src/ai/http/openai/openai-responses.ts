/**
 * Response bodies and stream chunks in OpenAI's shapes (chat.completion, chat.completion.chunk, list of
 * embeddings, list of models), built from the gateway's results.
 */
import { randomUUID } from 'node:crypto';
import type { ModelInfo, TokenUsage, ToolCall, ToolCallDelta } from '../../providers/ai-provider.interface';

export type OpenAiFinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

/**
 * Providers' own finish reasons in OpenAI's vocabulary: Anthropic's `max_tokens`, Gemini's `MAX_TOKENS` and
 * Ollama's `length` mean the token limit; safety stops are `content_filter`; every other end is `stop`.
 */
export function openAiFinishReason(reason: string | undefined): OpenAiFinishReason {
  switch (reason?.toLowerCase()) {
    case 'tool_calls':
    case 'tool_use':
      return 'tool_calls';
    case 'length':
    case 'max_tokens':
    case 'model_length':
      return 'length';
    case 'content_filter':
    case 'safety':
    case 'recitation':
    case 'blocklist':
    case 'prohibited_content':
    case 'spii':
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** Counts the provider did not report are 0; undefined when it reported none at all. */
export function openAiUsage(usage: TokenUsage | undefined): OpenAiUsage | undefined {
  if (!usage) return undefined;
  const prompt = usage.inputTokens ?? 0;
  const completion = usage.outputTokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.totalTokens ?? prompt + completion,
    ...(usage.cachedInputTokens !== undefined ? { prompt_tokens_details: { cached_tokens: usage.cachedInputTokens } } : {}),
    ...(usage.reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } } : {}),
  };
}

/** `chatcmpl-` and 32 hex digits, fresh per completion. */
export function completionId(): string {
  return `chatcmpl-${randomUUID().replace(/-/g, '')}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The `model` field: `provider/model` of whoever answered, the form `model` accepts and /models lists. */
export function qualifiedModel(provider: string, model: string): string {
  return `${provider}/${model}`;
}

export interface ChatCompletionResult {
  provider: string;
  model: string;
  text: string;
  finishReason?: string;
  usage?: TokenUsage;
  toolCalls?: ToolCall[];
}

export function chatCompletionBody(result: ChatCompletionResult) {
  const usage = openAiUsage(result.usage);
  return {
    id: completionId(),
    object: 'chat.completion' as const,
    created: unixSeconds(),
    model: qualifiedModel(result.provider, result.model),
    choices: [
      {
        index: 0,
        message: result.toolCalls?.length
          ? { role: 'assistant' as const, content: result.text === '' ? null : result.text, refusal: null, tool_calls: result.toolCalls.map(openAiToolCall) }
          : { role: 'assistant' as const, content: result.text, refusal: null },
        logprobs: null,
        finish_reason: openAiFinishReason(result.finishReason),
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/** Shared fields of one stream's chunks: one id, one creation time, one model. */
export interface ChunkHeader {
  id: string;
  created: number;
  model: string;
}

function openAiToolCall(call: ToolCall) {
  return { id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } };
}

/** A tool-call piece as OpenAI streams it: `id`, `type` and `name` on a call's first piece, arguments after. */
export function toolCallDeltaBody(delta: ToolCallDelta) {
  return {
    index: delta.index,
    ...(delta.id !== undefined ? { id: delta.id, type: 'function' as const } : {}),
    function: { ...(delta.name !== undefined ? { name: delta.name } : {}), arguments: delta.arguments ?? '' },
  };
}

export function chunkBody(header: ChunkHeader, delta: { role?: 'assistant'; content?: string; tool_calls?: object[] }, finishReason: OpenAiFinishReason | null) {
  return {
    id: header.id,
    object: 'chat.completion.chunk' as const,
    created: header.created,
    model: header.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The extra last chunk OpenAI sends with `stream_options.include_usage`: no choices, only usage. */
export function usageChunkBody(header: ChunkHeader, usage: OpenAiUsage) {
  return { id: header.id, object: 'chat.completion.chunk' as const, created: header.created, model: header.model, choices: [], usage };
}

/** Float32 little-endian bytes in base64: what `encoding_format: "base64"` asks for (the official client's default). */
export function base64Embedding(vector: readonly number[]): string {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

export function embeddingsBody(
  embeddings: readonly number[][],
  provider: string,
  model: string,
  format: 'float' | 'base64',
  promptTokens: number,
) {
  return {
    object: 'list' as const,
    data: embeddings.map((vector, index) => ({
      object: 'embedding' as const,
      index,
      embedding: format === 'base64' ? base64Embedding(vector) : vector,
    })),
    model: qualifiedModel(provider, model),
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/** OpenAI's model object; `created` 0 says "unknown": providers do not all report a creation time. */
export function modelObject(id: string, ownedBy: string) {
  return { id, object: 'model' as const, created: 0, owned_by: ownedBy };
}

/** Provider models as `provider/model`, then the configured aliases (owned by `tollgate`). */
export function modelsBody(models: readonly ModelInfo[], aliases: readonly string[] = []) {
  return {
    object: 'list' as const,
    data: [
      ...models.map((model) => modelObject(qualifiedModel(model.provider, model.id), model.ownedBy ?? model.provider)),
      ...aliases.map((alias) => modelObject(alias, 'tollgate')),
    ],
  };
}
