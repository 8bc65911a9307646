/**
 * Streamed chat completions as OpenAI sends them: server-sent events of `chat.completion.chunk` objects
 * (the role first, then content and tool-call deltas, then the finish reason), an optional usage chunk, then
 * `data: [DONE]`. Written by the shared SSE writer (src/http/sse-writer.ts): nothing before the first event,
 * so a failure up to then (unknown model, refusal, every fallback failing) is an ordinary JSON error with its
 * status; a failure after it is one `data: {"error": ...}` event, which OpenAI's clients raise as an API error.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GenerateStreamEvent } from '../../client/ai-client';
import { type SseFormat, sseData, writeSse } from '../../../http/sse-writer';
import { toOpenAiError } from './openai-errors';
import { chunkBody, type ChunkHeader, completionId, openAiFinishReason, openAiUsage, qualifiedModel, toolCallDeltaBody, unixSeconds, usageChunkBody } from './openai-responses';

const DONE = sseData('[DONE]');

/**
 * Writes the stream; `requestedModel` (`provider/model` as asked) names the chunks until the final one, which
 * names whoever answered (they differ after a fallback).
 */
export function writeChatStream(
  request: FastifyRequest,
  reply: FastifyReply,
  events: AsyncIterable<GenerateStreamEvent>,
  requestedModel: string,
  includeUsage: boolean,
): Promise<void> {
  return writeSse(request, reply, events, chatStreamFormat({ id: completionId(), created: unixSeconds(), model: requestedModel }, includeUsage));
}

/** OpenAI's spelling of a generation stream, every chunk under `header`. */
export function chatStreamFormat(header: ChunkHeader, includeUsage: boolean): SseFormat<GenerateStreamEvent> {
  return {
    opening: () => sseData(chunkBody(header, { role: 'assistant', content: '' }, null)),
    render(event) {
      if (event.type === 'done') {
        const final: ChunkHeader = { ...header, model: qualifiedModel(event.provider, event.model) };
        const usage = includeUsage ? openAiUsage(event.usage) : undefined;
        return sseData(chunkBody(final, {}, openAiFinishReason(event.finishReason))) + (usage ? sseData(usageChunkBody(final, usage)) : '') + DONE;
      }
      let frames = event.text !== '' ? sseData(chunkBody(header, { content: event.text }, null)) : '';
      if (event.toolCalls?.length) frames += sseData(chunkBody(header, { tool_calls: event.toolCalls.map(toolCallDeltaBody) }, null));
      return frames;
    },
    isLast: (event) => event.type === 'done',
    closing: () => DONE,
    failure(error) {
      const mapped = toOpenAiError(error);
      return { frame: sseData(mapped.body), unexpected: mapped.unexpected };
    },
  };
}
