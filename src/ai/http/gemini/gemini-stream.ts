/**
 * `streamGenerateContent?alt=sse` as Gemini sends it: `data: {GenerateContentResponse}` events, text parts as
 * they come, function calls whole (Gemini never splits one), the finish reason and usageMetadata on the last.
 * Written by the shared SSE writer: a failure before the first event is an ordinary JSON error with its status;
 * one after it ends the stream with a `data: {"error": {...}}` event, which `@google/genai` raises as an ApiError.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GenerateStreamEvent } from '../../client/ai-client';
import type { ToolCallDelta } from '../../providers/ai-provider.interface';
import { type SseFormat, sseData, writeSse } from '../../../http/sse-writer';
import { functionCallPart, generateContentBody, geminiFinishReason, responseId } from './gemini-answers';
import { toGeminiError } from './gemini-errors';

/** `requestedModel` (`provider/model` as routed) names the chunks until the last, which names whoever answered. */
export function writeGeminiStream(request: FastifyRequest, reply: FastifyReply, events: AsyncIterable<GenerateStreamEvent>, requestedModel: string): Promise<void> {
  return writeSse(request, reply, events, geminiStreamFormat(requestedModel, responseId()));
}

/** Gemini's spelling of a generation stream; tool-call pieces are gathered and sent whole on the last event. */
export function geminiStreamFormat(requestedModel: string, id: string): SseFormat<GenerateStreamEvent> {
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  return {
    opening: () => '',
    render(event) {
      if (event.type === 'done') {
        const parts = [...calls.values()].map(functionCallPart);
        return sseData(
          generateContentBody({
            parts: parts.length > 0 ? parts : [{ text: '' }],
            finishReason: geminiFinishReason(event.finishReason),
            usage: event.usage,
            modelVersion: `${event.provider}/${event.model}`,
            responseId: id,
          }),
        );
      }
      for (const delta of event.toolCalls ?? []) gather(calls, delta);
      return event.text === '' ? '' : sseData(generateContentBody({ parts: [{ text: event.text }], modelVersion: requestedModel, responseId: id }));
    },
    isLast: (event) => event.type === 'done',
    // AiClient always ends with `done` or throws; should the events ever run out, the client still learns it.
    closing: () => sseData({ error: { code: 500, message: 'The stream ended before the answer was complete.', status: 'INTERNAL' } }),
    failure(error) {
      const mapped = toGeminiError(error);
      return { frame: sseData(mapped.body), unexpected: mapped.unexpected };
    },
  };
}

function gather(calls: Map<number, { id: string; name: string; arguments: string }>, delta: ToolCallDelta): void {
  const call = calls.get(delta.index) ?? { id: '', name: '', arguments: '' };
  if (delta.id !== undefined) call.id = delta.id;
  if (delta.name !== undefined) call.name = delta.name;
  call.arguments += delta.arguments ?? '';
  calls.set(delta.index, call);
}
