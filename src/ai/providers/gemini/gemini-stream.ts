import { isObject, numberOrUndefined } from '../../../common/json-values';
import { InvalidResponseError } from '../../errors';
import type { GenerateStreamChunk, TokenUsage } from '../ai-provider.interface';
import { mapGeminiError } from './gemini-errors';
import { mapGeminiFinishReason } from './gemini-finish-reason';
import { readGeminiAnswer } from './gemini-response';

/**
 * Turns `streamGenerateContent?alt=sse` events into chunks. Every event is a partial response; a functionCall
 * part arrives whole, so each becomes one ToolCallDelta with id, name and all its arguments, indexed in order
 * across events. The last event carries the finish reason and usage; there is no terminator event, so an end
 * without a finish reason means the stream was cut short.
 */
export class GeminiStreamTranslator {
  private callCount = 0;
  private finishReason?: string;
  private usage?: TokenUsage;
  private model: string;

  constructor(
    private readonly provider: string,
    private readonly requestedModel: string,
  ) {
    this.model = requestedModel;
  }

  /** The chunk one event yields, if it holds text or calls; an `{"error": ...}` event (after the 200) throws. */
  event(data: Record<string, unknown>): GenerateStreamChunk | undefined {
    if (isObject(data.error)) {
      const code = numberOrUndefined(data.error.code);
      throw mapGeminiError({ provider: this.provider, status: code ?? 500, headers: {}, body: data, model: this.requestedModel });
    }
    const answer = readGeminiAnswer(data, this.provider, this.requestedModel);
    this.model = answer.model;
    this.usage = answer.usage ?? this.usage;
    this.finishReason = answer.finishReason ?? this.finishReason;
    const toolCalls = answer.toolCalls.map((call) => ({ index: this.callCount++, id: call.id, name: call.name, arguments: call.arguments }));
    if (answer.text === '' && toolCalls.length === 0) return undefined;
    return { done: false, text: answer.text, ...(toolCalls.length > 0 ? { toolCalls } : {}) };
  }

  finish(): GenerateStreamChunk {
    if (this.finishReason === undefined) {
      throw new InvalidResponseError(`${this.provider}: upstream stream ended without a finish reason`, { provider: this.provider });
    }
    return { done: true, model: this.model, finishReason: mapGeminiFinishReason(this.finishReason, this.callCount > 0), usage: this.usage };
  }
}
