/**
 * `"stream": true` on /v1/generate and /v1/search/generate: server-sent events `delta` (`{"text"}`) and
 * `tool_call` (`{"index", "id"?, "name"?, "arguments"?}`: the first piece of a call names it, later pieces of the
 * same index add argument text), then one
 * `done` (provider, model, finish_reason, usage, request_id), or one `error` carrying the error envelope.
 * Nothing is written before the first event of the generation arrived, so a failure up to then (unknown
 * model, refusal, every fallback failing) is an ordinary JSON error with its status, and retries and
 * fallback stay possible; after it, the status is sent and a failure can only be an `error` event.
 */
import { PassThrough } from 'node:stream';
import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GenerateStreamEvent } from '../client/ai-client';
import { errorEnvelope, toApiError } from '../../http/api-error';
import { drainedOrClosed, snakeCaseKeys } from './api-response';

/** An event sent once the generation has started, before its first delta (search results, for one). */
export interface LeadingEvent {
  event: string;
  data: Record<string, unknown>;
}

const logger = new Logger('GenerateStream');

export async function writeGenerateStream(
  request: FastifyRequest,
  reply: FastifyReply,
  events: AsyncIterable<GenerateStreamEvent>,
  leading: readonly LeadingEvent[] = [],
): Promise<void> {
  const iterator = events[Symbol.asyncIterator]();
  // Errors before the first event propagate to the exception filter as a normal JSON error.
  let next = await iterator.next();
  const requestId = String(request.id);
  // Sent as a stream payload rather than a hijacked response, so Fastify's own handling stays: headers set
  // by hooks, onResponse hooks (metrics), and the payload destroyed when the caller goes away.
  const body = new PassThrough();
  reply
    .status(200)
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    // Reverse proxies must not buffer the events.
    .header('x-accel-buffering', 'no')
    .send(body);
  try {
    for (const { event, data } of leading) {
      if (!(await send(body, event, { ...(snakeCaseKeys(data) as object), request_id: requestId }))) return;
    }
    while (!next.done) {
      const event = next.value;
      if (event.type === 'delta') {
        const textDelta = event.text !== '' || !event.toolCalls?.length;
        if (textDelta && !(await send(body, 'delta', { text: event.text }))) return;
        for (const call of event.toolCalls ?? []) {
          if (!(await send(body, 'tool_call', call))) return;
        }
      } else {
        const { type, ...done } = event;
        body.end(frame('done', { ...(snakeCaseKeys(done) as object), request_id: requestId }));
        return;
      }
      next = await iterator.next();
    }
    body.end();
  } catch (error) {
    // A caller that went away needs no error event; its disconnect already aborted the upstream call.
    if (body.destroyed) return;
    const apiError = toApiError(error);
    if (apiError.unexpected) {
      const name = error instanceof Error ? error.name : typeof error;
      logger.error(`request ${requestId} failed mid-stream with an unexpected ${name}`, error instanceof Error ? error.stack : undefined);
    }
    body.end(frame('error', errorEnvelope(apiError, requestId)));
  } finally {
    // Ends the upstream request when the caller went away mid-stream; a no-op after a complete stream.
    await iterator.return?.();
  }
}

function frame(event: string, data: object): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** One event; waits while the client reads slower than the provider writes. False when the caller has gone away. */
async function send(body: PassThrough, event: string, data: object): Promise<boolean> {
  if (body.destroyed) return false;
  if (!body.write(frame(event, data))) {
    await drainedOrClosed(body);
  }
  return !body.destroyed;
}
