/**
 * Sampling parameters in the Messages API's words. Anthropic's `temperature` ranges 0 to 1 where OpenAI's
 * ranges 0 to 2, so a value above 1 is refused naming it rather than answered by the API's 400 (which the
 * caller would see as a provider error); `seed` and the penalties have no counterpart and are accepted only at
 * their no-op value.
 */
import { InvalidRequestError } from '../../errors';
import type { GenerateRequest } from '../ai-provider.interface';

export const ANTHROPIC_MAX_TEMPERATURE = 1;

export interface AnthropicSamplingFields {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
}

/** Only what the caller gave is sent: the API's defaults apply otherwise. */
export function toAnthropicSampling(request: GenerateRequest, provider: string): AnthropicSamplingFields {
  refuseUnsupported(request, provider);
  if (request.temperature !== undefined && request.temperature > ANTHROPIC_MAX_TEMPERATURE) {
    throw new InvalidRequestError(`${provider}: anthropic takes temperature from 0 to ${ANTHROPIC_MAX_TEMPERATURE}, not ${request.temperature}`, { provider, param: 'temperature' });
  }
  return {
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.topK !== undefined ? { top_k: request.topK } : {}),
    ...(request.stop !== undefined && request.stop.length > 0 ? { stop_sequences: request.stop } : {}),
  };
}

/** Parameters the Messages API lacks: accepted only at their no-op value, refused otherwise, never dropped. */
function refuseUnsupported(request: GenerateRequest, provider: string): void {
  const unsupported: Array<[string, number | undefined, number | undefined]> = [
    ['seed', request.seed, undefined],
    ['frequency_penalty', request.frequencyPenalty, 0],
    ['presence_penalty', request.presencePenalty, 0],
  ];
  for (const [name, value, noOp] of unsupported) {
    if (value !== undefined && value !== noOp) {
      throw new InvalidRequestError(`${provider}: anthropic does not support ${name}`, { provider, param: name });
    }
  }
}
