/**
 * `"stream": true` on /v1/generate and /v1/search/generate: server-sent events `delta` (`{"text"}`), then one
 * `done` (provider, model, finish_reason, usage, request_id), or one `error` carrying the error envelope.
 * Nothing is written before the first event of the generation arrived, so a failure up to then (unknown
 * model, refusal, every fallback failing) is an ordinary JSON error with its status, and retries and
 * fallback stay possible; after it, the status is sent and a failure can only be an `error` event.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GenerateStreamEvent } from '../client/ai-client';
import { errorEnvelope, toApiError } from './api-error';
import { snakeCaseKeys } from './api-response';

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
  const raw = reply.raw;
  // Headers set by hooks so far (x-request-id, rate-limit headers) go out with the stream's own.
  const hookHeaders: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) hookHeaders[name] = value;
  reply.hijack();
  raw.writeHead(200, {
    ...hookHeaders,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    // Reverse proxies must not buffer the events.
    'x-accel-buffering': 'no',
  });
  try {
    for (const { event, data } of leading) {
      if (!(await send(raw, event, { ...(snakeCaseKeys(data) as object), request_id: requestId }))) return;
    }
    while (!next.done) {
      const event = next.value;
      if (event.type === 'delta') {
        if (!(await send(raw, 'delta', { text: event.text }))) return;
      } else {
        const { type, ...done } = event;
        raw.end(frame('done', { ...(snakeCaseKeys(done) as object), request_id: requestId }));
        return;
      }
      next = await iterator.next();
    }
    raw.end();
  } catch (error) {
    // A caller that went away needs no error event; its disconnect already aborted the upstream call.
    if (raw.destroyed) return;
    const apiError = toApiError(error);
    if (apiError.unexpected) {
      const name = error instanceof Error ? error.name : typeof error;
      logger.error(`request ${requestId} failed mid-stream with an unexpected ${name}`, error instanceof Error ? error.stack : undefined);
    }
    raw.end(frame('error', errorEnvelope(apiError, requestId)));
  } finally {
    // Ends the upstream request when the caller went away mid-stream; a no-op after a complete stream.
    await iterator.return?.();
  }
}

function frame(event: string, data: object): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** One event; waits for the socket to drain when it is full. False when the caller has gone away. */
async function send(raw: ServerResponse, event: string, data: object): Promise<boolean> {
  if (raw.destroyed) return false;
  if (!raw.write(frame(event, data))) {
    await new Promise<void>((resolve) => {
      const resume = () => {
        raw.off('drain', resume);
        raw.off('close', resume);
        resolve();
      };
      raw.on('drain', resume);
      raw.on('close', resume);
    });
  }
  return !raw.destroyed;
}
