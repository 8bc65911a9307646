/**
 * `"stream": true` on /v1/generate and /v1/search/generate: server-sent events `delta` (`{"text"}`) and
 * `tool_call` (`{"index", "id"?, "name"?, "arguments"?}`: the first piece of a call names it, later pieces of the
 * same index add argument text), then one
 * `done` (provider, model, finish_reason, usage, request_id), or one `error` carrying the error envelope.
 * Written by the shared SSE writer (src/http/sse-writer.ts): nothing before the first event of the
 * generation, so a failure up to then is an ordinary JSON error with its status; after it, a failure can
 * only be an `error` event.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GenerateStreamEvent } from '../client/ai-client';
import { errorEnvelope, toApiError } from '../../http/api-error';
import { type SseFormat, sseEvent, writeSse } from '../../http/sse-writer';
import { snakeCaseKeys } from './api-response';

/** An event sent once the generation has started, before its first delta (search results, for one). */
export interface LeadingEvent {
  event: string;
  data: Record<string, unknown>;
}

export function writeGenerateStream(
  request: FastifyRequest,
  reply: FastifyReply,
  events: AsyncIterable<GenerateStreamEvent>,
  leading: readonly LeadingEvent[] = [],
): Promise<void> {
  return writeSse(request, reply, events, generateStreamFormat(String(request.id), leading));
}

/** The /v1 spelling of a generation stream; `requestId` goes into the leading, `done` and `error` events. */
export function generateStreamFormat(requestId: string, leading: readonly LeadingEvent[] = []): SseFormat<GenerateStreamEvent> {
  return {
    opening: () => leading.map(({ event, data }) => sseEvent(event, { ...(snakeCaseKeys(data) as object), request_id: requestId })).join(''),
    render(event) {
      if (event.type === 'done') {
        const { type, ...done } = event;
        return sseEvent('done', { ...(snakeCaseKeys(done) as object), request_id: requestId });
      }
      // A delta that only carries tool-call pieces sends no empty text event.
      let frames = event.text !== '' || !event.toolCalls?.length ? sseEvent('delta', { text: event.text }) : '';
      for (const call of event.toolCalls ?? []) frames += sseEvent('tool_call', call);
      return frames;
    },
    isLast: (event) => event.type === 'done',
    closing: () => '',
    failure(error) {
      const apiError = toApiError(error);
      return { frame: sseEvent('error', errorEnvelope(apiError, requestId)), unexpected: apiError.unexpected };
    },
  };
}
