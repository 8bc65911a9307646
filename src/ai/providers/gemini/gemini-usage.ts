import { isObject, numberOrUndefined } from '../../../common/json-values';
import type { TokenUsage } from '../ai-provider.interface';

/**
 * `usageMetadata`: `candidatesTokenCount` leaves out the thinking tokens (`thoughtsTokenCount`), which Gemini
 * bills as output, so output is their sum and reasoning the thoughts; `cachedContentTokenCount` is the part of
 * the prompt served from a context cache. The total is Gemini's own (it also counts tool-use prompt tokens).
 */
export function convertGeminiUsage(value: unknown): TokenUsage | undefined {
  if (!isObject(value)) return undefined;
  const inputTokens = numberOrUndefined(value.promptTokenCount);
  const candidates = numberOrUndefined(value.candidatesTokenCount);
  const reasoningTokens = numberOrUndefined(value.thoughtsTokenCount);
  const outputTokens = candidates === undefined && reasoningTokens === undefined ? undefined : (candidates ?? 0) + (reasoningTokens ?? 0);
  const usage: TokenUsage = {
    inputTokens,
    outputTokens,
    totalTokens: numberOrUndefined(value.totalTokenCount),
    cachedInputTokens: numberOrUndefined(value.cachedContentTokenCount),
    reasoningTokens,
  };
  const present = Object.entries(usage).filter(([, count]) => count !== undefined);
  return present.length === 0 ? undefined : (Object.fromEntries(present) as TokenUsage);
}
