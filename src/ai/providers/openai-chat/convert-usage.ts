/** OpenAI usage objects, with the cached-prompt and reasoning counts of their `*_details`. */
import type { TokenUsage } from '../ai-provider.interface';

export function parseUsage(usage: unknown): TokenUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const u = usage as Record<string, unknown>;
  const input = finite(u.prompt_tokens);
  const output = finite(u.completion_tokens);
  const total = finite(u.total_tokens);
  // DeepSeek reports cache hits as a top-level prompt_cache_hit_tokens instead of prompt_tokens_details.
  const cached = finite(detail(u.prompt_tokens_details, 'cached_tokens')) ?? finite(u.prompt_cache_hit_tokens);
  const reasoning = finite(detail(u.completion_tokens_details, 'reasoning_tokens'));
  return tokenUsage(input, output, total, cached, reasoning);
}

/** A usage of the figures an upstream gave: one it left out is absent, never zero. */
export function tokenUsage(input?: number, output?: number, total?: number, cached?: number, reasoning?: number): TokenUsage {
  const result: TokenUsage = {};
  if (input !== undefined) result.inputTokens = input;
  if (output !== undefined) result.outputTokens = output;
  if (total !== undefined) result.totalTokens = total;
  if (cached !== undefined) result.cachedInputTokens = cached;
  if (reasoning !== undefined) result.reasoningTokens = reasoning;
  return result;
}

function detail(details: unknown, key: string): unknown {
  return details && typeof details === 'object' ? (details as Record<string, unknown>)[key] : undefined;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
