/**
 * Answers of the Anthropic Messages surface in Anthropic's shapes (Message, usage, stop reasons, the models
 * list), built from the domain's results whichever provider answered.
 */
import { randomUUID } from 'node:crypto';
import type { ModelInfo, TokenUsage, ToolCall } from '../../providers/ai-provider.interface';

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

/**
 * The domain's finish reasons (OpenAI's words) in Anthropic's: `length` is `max_tokens`, `tool_calls` is
 * `tool_use`, a content filter is a `refusal`. The domain does not say whether a stop sequence ended the
 * answer, so `stop` is `end_turn` (and `stop_sequence` stays null).
 */
export function anthropicStopReason(reason: string | undefined): AnthropicStopReason {
  switch (reason) {
    case 'tool_calls':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'pause_turn':
      return 'pause_turn';
    default:
      return 'end_turn';
  }
}

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/**
 * Anthropic counts cache reads and cache writes beside `input_tokens`, the domain inside them: both are moved
 * out, so a client adding the fields counts each token once; the writes are split by tier as Anthropic does.
 */
export function anthropicUsage(usage: TokenUsage | undefined): AnthropicUsage {
  const cached = usage?.cachedInputTokens ?? 0;
  const written = usage?.cacheWriteInputTokens ?? 0;
  const writtenForAnHour = Math.min(usage?.cacheWrite1hInputTokens ?? 0, written);
  return {
    input_tokens: Math.max(0, (usage?.inputTokens ?? 0) - cached - written),
    output_tokens: usage?.outputTokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    cache_creation: { ephemeral_5m_input_tokens: written - writtenForAnHour, ephemeral_1h_input_tokens: writtenForAnHour },
  };
}

/** `msg_` and 24 hex digits, fresh per answer. */
export function messageId(): string {
  return `msg_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/** A tool's arguments as the object `tool_use.input` must be; text that is not a JSON object is kept under `_raw`. */
export function toolInput(argumentsText: string): Record<string, unknown> {
  if (argumentsText.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Falls through: the model's text is kept as it wrote it.
  }
  return { _raw: argumentsText };
}

export type AnthropicContentBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface MessageResult {
  /** The `model` field: as the caller named it. */
  model: string;
  text: string;
  finishReason?: string;
  usage?: TokenUsage;
  toolCalls?: ToolCall[];
}

export function messageBody(result: MessageResult) {
  const content: AnthropicContentBlock[] = [];
  if (result.text !== '') content.push({ type: 'text', text: result.text });
  for (const call of result.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments) });
  return {
    id: messageId(),
    type: 'message' as const,
    role: 'assistant' as const,
    model: result.model,
    content,
    stop_reason: anthropicStopReason(result.finishReason),
    stop_sequence: null,
    usage: anthropicUsage(result.usage),
  };
}

/** Anthropic's model object; `created_at` is the epoch where the provider reports no date. */
export function modelInfoBody(id: string) {
  return { type: 'model' as const, id, display_name: id, created_at: new Date(0).toISOString() };
}

/** Provider models as `provider/model`, then the aliases: one page with everything, as /openai/v1/models. */
export function modelsListBody(models: readonly ModelInfo[], aliases: readonly string[]) {
  const data = [...models.map((model) => modelInfoBody(`${model.provider}/${model.id}`)), ...aliases.map(modelInfoBody)];
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
