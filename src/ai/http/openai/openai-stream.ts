/**
 * Streamed chat completions as OpenAI sends them: server-sent events of `chat.completion.chunk` objects
 * (the role first, then content deltas, then the finish reason), an optional usage chunk, then
 * `data: [DONE]`. Nothing is written before the first event arrived, so a failure up to then (unknown
 * model, refusal, every fallback failing) is an ordinary JSON error with its status; a failure after it
 * is one `data: {"error": ...}` event, which OpenAI's clients raise as an API error.
 */
import { Logger } from '@nestjs/common';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GenerateStreamEvent } from '../../client/ai-client';
import { drainedOrClosed } from '../api-response';
import { toOpenAiError } from './openai-errors';
import { chunkBody, type ChunkHeader, completionId, openAiFinishReason, openAiUsage, qualifiedModel, toolCallDeltaBody, unixSeconds, usageChunkBody } from './openai-responses';

const DONE = 'data: [DONE]\n\n';
const logger = new Logger('OpenAiChatStream');

/**
 * Writes the stream to the raw response; `requestedModel` (`provider/model` as asked) names the chunks until
 * the final one, which names whoever answered (they differ after a fallback).
 */
export async function writeChatStream(
  request: FastifyRequest,
  reply: FastifyReply,
  events: AsyncIterable<GenerateStreamEvent>,
  requestedModel: string,
  includeUsage: boolean,
): Promise<void> {
  const iterator = events[Symbol.asyncIterator]();
  // Errors before the first event propagate to the exception filter as a normal JSON error.
  let next = await iterator.next();
  const raw = reply.raw;
  // Written to the raw response for speed; headers hooks and guards set on the reply (the rate-limit ones)
  // would be lost with the hijack, so they go first.
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
  const header: ChunkHeader = { id: completionId(), created: unixSeconds(), model: requestedModel };
  try {
    if (!(await send(raw, chunkBody(header, { role: 'assistant', content: '' }, null)))) return;
    while (!next.done) {
      const event = next.value;
      if (event.type === 'delta') {
        if (event.text !== '' && !(await send(raw, chunkBody(header, { content: event.text }, null)))) return;
        const toolCalls = event.toolCalls?.map(toolCallDeltaBody);
        if (toolCalls?.length && !(await send(raw, chunkBody(header, { tool_calls: toolCalls }, null)))) return;
      } else {
        const final: ChunkHeader = { ...header, model: qualifiedModel(event.provider, event.model) };
        if (!(await send(raw, chunkBody(final, {}, openAiFinishReason(event.finishReason))))) return;
        const usage = includeUsage ? openAiUsage(event.usage) : undefined;
        if (usage && !(await send(raw, usageChunkBody(final, usage)))) return;
        raw.end(DONE);
        return;
      }
      next = await iterator.next();
    }
    raw.end(DONE);
  } catch (error) {
    const mapped = toOpenAiError(error);
    if (mapped.unexpected) {
      const name = error instanceof Error ? error.name : typeof error;
      logger.error(`request ${request.id} failed mid-stream with an unexpected ${name}`, error instanceof Error ? error.stack : undefined);
    }
    if (!raw.destroyed) raw.end(`data: ${JSON.stringify(mapped.body)}\n\n`);
  } finally {
    // Ends the upstream request when the caller went away mid-stream; a no-op after a complete stream.
    await iterator.return?.();
  }
}

/**
 * One event; waits for the socket to drain when it is full. False when the caller has gone away. The events
 * of one burst (an upstream read usually carries several frames) leave in one write: the first corks the
 * socket, and it is uncorked once the promise chain of that turn has run, so nothing waits for later input.
 */
async function send(raw: ServerResponse, chunk: object): Promise<boolean> {
  if (raw.destroyed) return false;
  if (raw.writableCorked === 0) {
    raw.cork();
    process.nextTick(uncork, raw);
  }
  if (!raw.write(`data: ${JSON.stringify(chunk)}\n\n`)) {
    await drainedOrClosed(raw);
  }
  return !raw.destroyed;
}

function uncork(raw: ServerResponse): void {
  raw.uncork();
}
