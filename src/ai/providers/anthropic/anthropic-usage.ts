import { isObject, numberOrUndefined } from '../../../common/json-values';
import type { TokenUsage } from '../ai-provider.interface';

/**
 * Messages API usage -> TokenUsage. `input_tokens` counts only the uncached part: cache reads and cache writes
 * are reported beside it, so Tollgate's inputTokens is their sum, cachedInputTokens the cache reads and
 * cacheWriteInputTokens the writes, of which `cache_creation.ephemeral_1h_input_tokens` were for an hour;
 * `server_tool_use.web_search_requests` the searches a server tool made.
 */
export function toTokenUsage(value: unknown): TokenUsage | undefined {
  if (!isObject(value)) return undefined;
  const uncached = numberOrUndefined(value.input_tokens);
  const cacheRead = numberOrUndefined(value.cache_read_input_tokens);
  const cacheWrite = numberOrUndefined(value.cache_creation_input_tokens);
  const outputTokens = numberOrUndefined(value.output_tokens);
  const inputTokens =
    uncached === undefined && cacheRead === undefined && cacheWrite === undefined
      ? undefined
      : (uncached ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  const writes1h = cacheWrite ? oneHourWrites(value.cache_creation) : undefined;
  const searches = isObject(value.server_tool_use) ? numberOrUndefined(value.server_tool_use.web_search_requests) : undefined;
  return {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens !== undefined && outputTokens !== undefined ? inputTokens + outputTokens : undefined,
    ...(cacheRead ? { cachedInputTokens: cacheRead } : {}),
    ...(cacheWrite ? { cacheWriteInputTokens: cacheWrite } : {}),
    ...(writes1h ? { cacheWrite1hInputTokens: writes1h } : {}),
    ...(searches ? { webSearchRequests: searches } : {}),
  };
}

function oneHourWrites(creation: unknown): number | undefined {
  return isObject(creation) ? numberOrUndefined(creation.ephemeral_1h_input_tokens) : undefined;
}
