/**
 * The model-call record: one per model call that reached an upstream (generate, stream, embeddings; each
 * retry and fallback attempt on its own), handed to the client's optional sink (the governance ledger).
 * Token figures come from the upstream's usage report; where it reported none they are estimated from text
 * length and marked `estimated` (docs/governance.md#ledger-and-usage).
 */
import type { ChatMessage, GenerateRequest, ProviderKind, TokenUsage, ToolCall, ToolCallDelta } from '../providers/ai-provider.interface';

export type ModelCallOperation = 'generate' | 'stream' | 'embed';

/** ok: the upstream answered in full; error: it failed or answered with an error; aborted: the caller stopped it. */
export type ModelCallStatus = 'ok' | 'error' | 'aborted';

export interface ModelCallUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache (part of inputTokens). */
  cachedTokens: number;
  /** Output tokens spent on reasoning (part of outputTokens), when the upstream reports them. */
  reasoningTokens?: number;
  /** Input tokens written to the prompt cache (part of inputTokens), priced at the cache-write price. */
  cacheWriteTokens?: number;
  /** The part of cacheWriteTokens written to a one-hour cache (Anthropic's dearer tier). */
  cacheWrite1hTokens?: number;
  /** Web searches a server tool made, priced per search when the price table has a price for them. */
  webSearchRequests?: number;
}

export interface ModelCallRecord {
  /** Registration name of the provider that was called. */
  provider: string;
  providerKind: ProviderKind;
  model: string;
  operation: ModelCallOperation;
  status: ModelCallStatus;
  usage: ModelCallUsage;
  /** True when the upstream reported no usage and the figures are estimated from text length. */
  estimated: boolean;
}

/** Receives every record; called synchronously, so it must be cheap (queue, don't write) and must not throw. */
export type ModelCallSink = (record: ModelCallRecord) => void;

/** The usual rule of thumb for English text and code with BPE tokenizers. */
export const ESTIMATED_CHARS_PER_TOKEN = 4;

export function estimateTokens(chars: number): number {
  return chars <= 0 ? 0 : Math.ceil(chars / ESTIMATED_CHARS_PER_TOKEN);
}

/** Characters of text a request sends: message texts and tool-call arguments (images are not counted). */
export function messageChars(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) {
    if (typeof message.content === 'string') chars += message.content.length;
    else if (Array.isArray(message.content)) {
      for (const part of message.content) if (part.type === 'text') chars += part.text.length;
    }
    if (message.role === 'assistant') chars += toolCallChars(message.toolCalls);
  }
  return chars;
}

/**
 * Tokens reserved for each message's role and framing: OpenAI documents 3 per message (and 3 to prime the
 * answer); Anthropic and Gemini frame turns alike. Rounded up to cover the priming.
 */
export const TOKENS_PER_MESSAGE = 4;

/**
 * Tokens reserved for each image, whose size is unknown before a provider reads it: Anthropic's documented
 * cost of an image at its largest unresized size (about 1.15 megapixels, width × height / 750), more than
 * OpenAI's high-detail maximum for gpt-4o (85 + 170 per 512-pixel tile: 1,445) and Gemini's 258 per tile.
 * Models that count an image otherwise are settled to the usage they report.
 */
export const TOKENS_PER_IMAGE = 1_600;

/**
 * The input tokens a budget reserves for a generation request: everything it sends upstream. Its text and
 * tool-call arguments, the tool definitions and the response_format schema as serialised (JSON, 4 characters
 * per token), {@link TOKENS_PER_MESSAGE} per message and {@link TOKENS_PER_IMAGE} per image. Computed only
 * when a gate reserves.
 */
export function requestInputTokens(messages: readonly ChatMessage[], request: Pick<GenerateRequest, 'tools' | 'responseFormat'>): number {
  let chars = messageChars(messages);
  if (request.tools?.length) chars += JSON.stringify(request.tools).length;
  if (request.responseFormat !== undefined) chars += JSON.stringify(request.responseFormat).length;
  return estimateTokens(chars) + messages.length * TOKENS_PER_MESSAGE + imageCount(messages) * TOKENS_PER_IMAGE;
}

function imageCount(messages: readonly ChatMessage[]): number {
  let images = 0;
  for (const message of messages) {
    if (Array.isArray(message.content)) for (const part of message.content) if (part.type === 'image') images += 1;
  }
  return images;
}

export function toolCallChars(calls: readonly (ToolCall | ToolCallDelta)[] | undefined): number {
  let chars = 0;
  for (const call of calls ?? []) chars += (call.name?.length ?? 0) + (call.arguments?.length ?? 0);
  return chars;
}

/**
 * The upstream's usage when it reported input or output tokens, else an estimate from the characters sent
 * and received. A partial report (only input, as Ollama's embeddings) is completed by estimating the rest.
 */
export function measuredUsage(usage: TokenUsage | undefined, sentChars: number, receivedChars: number): { usage: ModelCallUsage; estimated: boolean } {
  const input = usage?.inputTokens;
  const output = usage?.outputTokens;
  const estimated = input === undefined || (output === undefined && receivedChars > 0);
  return {
    usage: {
      inputTokens: input ?? estimateTokens(sentChars),
      outputTokens: output ?? estimateTokens(receivedChars),
      cachedTokens: usage?.cachedInputTokens ?? 0,
      ...(usage?.reasoningTokens !== undefined ? { reasoningTokens: usage.reasoningTokens } : {}),
      ...(usage?.cacheWriteInputTokens ? { cacheWriteTokens: usage.cacheWriteInputTokens } : {}),
      ...(usage?.cacheWrite1hInputTokens ? { cacheWrite1hTokens: usage.cacheWrite1hInputTokens } : {}),
      ...(usage?.webSearchRequests ? { webSearchRequests: usage.webSearchRequests } : {}),
    },
    estimated,
  };
}
