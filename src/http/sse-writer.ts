/**
 * The one server-sent-events writer of the server: /v1 streams (`event:` + `data:` frames) and /openai/v1
 * streams (`data:` chunks, then `[DONE]`) differ only in their {@link SseFormat}.
 *
 * - Nothing is written before the first event arrived: a failure up to then (unknown model, refusal, every
 *   fallback failing) propagates to the exception filter as an ordinary JSON error with its status, and
 *   retries and fallback stay possible (docs/decisions.md B10).
 * - The response is written to the raw socket after `reply.hijack()`, for speed; the headers hooks and guards
 *   set on the reply (request id, rate-limit headers) are copied first, since the hijack would drop them.
 *   Fastify's onResponse hooks (access log, metrics) still run when the response finishes.
 * - Back-pressure: a refused write waits for `drain` (or `close`). Frames of one burst leave in one write.
 * - A caller that goes away ends the loop and, through `return()`, the upstream request.
 * - A failure after the first byte is one frame of the format's error shape, and the response ends.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** What a failure after the first byte becomes: its frame, and whether it is a bug worth a log line. */
export interface SseFailure {
  frame: string;
  unexpected: boolean;
}

/** How one surface spells its stream; each method returns complete frames (`''` for none). */
export interface SseFormat<T> {
  /** Frames sent once the first event has arrived, before it. */
  opening(): string;
  /** The frames of one event. */
  render(event: T): string;
  /** True for the event that ends the stream: its frames are the last ones written. */
  isLast(event: T): boolean;
  /** Frames for events that ran out without a last one. */
  closing(): string;
  failure(error: unknown): SseFailure;
}

/** One named event: `event: <name>` and its JSON data. */
export function sseEvent(event: string, data: object): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** One unnamed event: a `data:` line only (JSON for objects, as is for strings such as OpenAI's `[DONE]`). */
export function sseData(data: object | string): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

const logger = new Logger('SseWriter');

export async function writeSse<T>(request: FastifyRequest, reply: FastifyReply, events: AsyncIterable<T>, format: SseFormat<T>): Promise<void> {
  const iterator = events[Symbol.asyncIterator]();
  // Errors before the first event propagate to the exception filter as a normal JSON error.
  let next = await iterator.next();
  const raw = openEventStream(request, reply);
  try {
    if (!(await send(raw, format.opening()))) return;
    while (!next.done) {
      const event = next.value;
      if (format.isLast(event)) {
        raw.end(format.render(event));
        return;
      }
      if (!(await send(raw, format.render(event)))) return;
      next = await iterator.next();
    }
    raw.end(format.closing());
  } catch (error) {
    // A caller that went away needs no error frame: its disconnect already aborted the upstream call, whose
    // failure is the consequence, not a fault.
    if (raw.destroyed) return;
    const failure = format.failure(error);
    if (failure.unexpected) {
      const name = error instanceof Error ? error.name : typeof error;
      logger.error(`request ${request.id} failed mid-stream with an unexpected ${name}`, error instanceof Error ? error.stack : undefined);
    }
    raw.end(failure.frame);
  } finally {
    // Ends the upstream request when the caller went away mid-stream; a no-op after a complete stream.
    await iterator.return?.();
  }
}

function openEventStream(request: FastifyRequest, reply: FastifyReply): ServerResponse {
  const raw = reply.raw;
  const hookHeaders = reply.getHeaders() as OutgoingHttpHeaders;
  reply.hijack();
  raw.writeHead(200, {
    ...hookHeaders,
    'x-request-id': String(request.id),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    // Reverse proxies must not buffer the events.
    'x-accel-buffering': 'no',
  });
  return raw;
}

/**
 * Writes frames; waits for the socket to drain when it is full. False when the caller has gone away. The
 * frames of one burst (an upstream read usually carries several events) leave in one write: the first corks
 * the socket, and it is uncorked once the promise chain of that turn has run, so nothing waits for later input.
 */
async function send(raw: ServerResponse, frames: string): Promise<boolean> {
  if (raw.destroyed) return false;
  if (frames === '') return true;
  if (raw.writableCorked === 0) {
    raw.cork();
    process.nextTick(uncork, raw);
  }
  if (!raw.write(frames)) {
    await drainedOrClosed(raw);
  }
  return !raw.destroyed;
}

function uncork(raw: ServerResponse): void {
  raw.uncork();
}

/** Resolves once a stream that refused a write can take more (`drain`) or is gone (`close`). */
function drainedOrClosed(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise<void>((resolve) => {
    const resume = () => {
      stream.off('drain', resume);
      stream.off('close', resume);
      resolve();
    };
    stream.on('drain', resume);
    stream.on('close', resume);
  });
}
