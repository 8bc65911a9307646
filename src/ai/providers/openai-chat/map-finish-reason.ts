/** Finish reasons of the OpenAI-shaped kinds in OpenAI's own words (the domain's). */
import type { FinishReason } from '../ai-provider.interface';

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
  // OpenAI's deprecated single-function form.
  function_call: 'tool_calls',
  // Mistral: the model's context was exhausted rather than max_tokens.
  model_length: 'length',
  // DeepSeek: the request was cut because the server lacked resources.
  insufficient_system_resource: 'length',
};

/** Unknown reasons pass through unchanged rather than being guessed into one of OpenAI's. */
export function mapFinishReason(reason: unknown): FinishReason | undefined {
  if (typeof reason !== 'string') return undefined;
  return FINISH_REASONS[reason] ?? reason;
}
