/**
 * Ollama's answer to domain terms: tool calls (arguments arrive as an object; older servers send no id, so
 * Tollgate makes `call_<index>`, stable within one answer), the finish reason and token usage.
 */
import { isObject } from '../../../common/json-values';
import { InvalidResponseError } from '../../errors';
import type { FinishReason, TokenUsage, ToolCall } from '../ai-provider.interface';
import { usageOf } from '../provider-support';

/** `index` numbers the call within the whole answer, so streamed calls keep distinct ids. */
export function fromOllamaToolCalls(value: unknown, firstIndex: number, provider: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(provider);
  return value.map((call, offset) => {
    if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string') throw invalid(provider);
    const args = call.function.arguments;
    const argumentsText = args === undefined || args === null ? '{}' : typeof args === 'string' ? args : JSON.stringify(args);
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : `call_${firstIndex + offset}`;
    return { id, name: call.function.name, arguments: argumentsText };
  });
}

function invalid(provider: string): InvalidResponseError {
  return new InvalidResponseError(`${provider}: upstream tool_calls are malformed`, { provider });
}

/**
 * Ollama says `stop` when the model ends its turn (also after tool calls) and `length` at num_predict; the
 * answer's tool calls make it `tool_calls`. `load`/`unload` (no generation) pass through unchanged.
 */
export function mapOllamaFinishReason(doneReason: unknown, sawToolCalls: boolean): FinishReason | undefined {
  if (sawToolCalls && (doneReason === 'stop' || doneReason === undefined)) return 'tool_calls';
  return typeof doneReason === 'string' ? doneReason : undefined;
}

/** prompt_eval_count and eval_count; Ollama reports no cached-token count. */
export function ollamaUsage(body: unknown): TokenUsage | undefined {
  return usageOf(body, { input: 'prompt_eval_count', output: 'eval_count' });
}
