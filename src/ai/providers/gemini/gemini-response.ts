import { randomUUID } from 'node:crypto';
import { isObject } from '../../../common/json-values';
import { InvalidResponseError, ProviderError } from '../../errors';
import type { GenerateResult, TokenUsage, ToolCall } from '../ai-provider.interface';
import { mapGeminiFinishReason } from './gemini-finish-reason';
import { convertGeminiUsage } from './gemini-usage';
import { THOUGHT_SIGNATURE_SEPARATOR, enumToken } from './gemini-wire';

/** One GenerateContentResponse (or one streamed piece of it), before finish reasons are mapped. */
export interface GeminiAnswer {
  text: string;
  toolCalls: ToolCall[];
  /** Gemini's own token, mapped once the whole answer's calls are known. */
  finishReason?: string;
  usage?: TokenUsage;
  model: string;
}

/**
 * Gemini gives calls no id (newer models may: that one is kept), yet tool results must name one, so each call
 * gets a random `call_<24 hex>`; results are sent back by function name. A thought signature on the part is
 * appended (gemini-wire.ts, THOUGHT_SIGNATURE_SEPARATOR) so the replayed call turn can carry it again.
 */
function callId(part: Record<string, unknown>, functionCall: Record<string, unknown>): string {
  const id = typeof functionCall.id === 'string' && functionCall.id !== '' ? functionCall.id : `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  return typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? `${id}${THOUGHT_SIGNATURE_SEPARATOR}${part.thoughtSignature}` : id;
}

/** Reads the first candidate; a prompt blocked before any candidate is a refused request. */
export function readGeminiAnswer(body: unknown, provider: string, requestedModel: string): GeminiAnswer {
  const invalid = (message: string) => new InvalidResponseError(`${provider}: ${message}`, { provider });
  if (!isObject(body)) throw invalid('upstream response is not an object');
  const candidates = body.candidates;
  if (candidates === undefined && isObject(body.promptFeedback)) {
    const reason = enumToken(body.promptFeedback.blockReason) ?? 'BLOCKED';
    throw new ProviderError(`${provider}: upstream blocked the prompt (${reason})`, { provider, status: 400 });
  }
  if (!Array.isArray(candidates) || candidates.length === 0 || !isObject(candidates[0])) {
    throw invalid('upstream response has no candidates');
  }
  const candidate = candidates[0];
  let text = '';
  const toolCalls: ToolCall[] = [];
  // A candidate stopped by a safety filter or a zero token budget can legitimately carry no content, or a
  // content with only its role (a thinking model out of tokens, a streamed last event): a finished candidate
  // may lack parts, an unfinished one may not.
  if (candidate.content !== undefined) {
    const { parts } = isObject(candidate.content) ? candidate.content : { parts: null };
    if (!(Array.isArray(parts) || (parts === undefined && candidate.finishReason !== undefined))) {
      throw invalid('upstream candidate has no parts');
    }
    for (const part of parts ?? []) {
      if (!isObject(part)) continue;
      if (isObject(part.functionCall)) {
        const { name, args } = part.functionCall;
        if (typeof name !== 'string' || name === '') throw invalid('upstream function call has no name');
        if (args !== undefined && !isObject(args)) throw invalid('upstream function call arguments are not an object');
        toolCalls.push({ id: callId(part, part.functionCall), name, arguments: JSON.stringify(args ?? {}) });
      } else if (typeof part.text === 'string' && part.thought !== true) {
        // Thought summaries are not part of the answer.
        text += part.text;
      }
    }
  }
  return {
    text,
    toolCalls,
    finishReason: enumToken(candidate.finishReason),
    usage: convertGeminiUsage(body.usageMetadata),
    model: typeof body.modelVersion === 'string' ? body.modelVersion : requestedModel,
  };
}

export function convertGeminiResponse(body: unknown, provider: string, requestedModel: string): GenerateResult {
  const answer = readGeminiAnswer(body, provider, requestedModel);
  return {
    text: answer.text,
    model: answer.model,
    finishReason: mapGeminiFinishReason(answer.finishReason, answer.toolCalls.length > 0),
    usage: answer.usage,
    ...(answer.toolCalls.length > 0 ? { toolCalls: answer.toolCalls } : {}),
  };
}
