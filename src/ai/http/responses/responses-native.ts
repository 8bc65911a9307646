/**
 * A Responses request as written, for an upstream that speaks the Responses API (docs/decisions.md B19), and its
 * answer relayed as the upstream wrote it.
 *
 * Tollgate's store stays the one that holds conversations (tenant-owned, and readable by any provider kind), so the
 * body sent on is self-contained: `store: false`, no `previous_response_id`, the stored conversation expanded into
 * `input` and item references replaced by the items they name. Everything else is the caller's, byte for byte
 * once serialised. The answer's echo of the request names what the caller asked: the model (as this surface names
 * models), `store` and `previous_response_id`; nothing else of it is changed.
 */
import { sseEvent } from '../../../http/sse-writer';
import type { GenerateStreamEvent } from '../../client/ai-client';
import { InvalidResponseError } from '../../errors';
import type { NativeEvent, NativeRequest } from '../../providers/ai-provider.interface';
import { qualifiedModel } from '../openai/openai-responses';
import type { ResponseHeader, UpstreamResponseBody } from './responses-bodies';
import type { ResponseItem } from './responses-input';
import type { ResponsesRequest } from './responses-requests';

/** What the answer echoes of the caller's request where the body sent on differs from it. */
export type CallerEcho = Pick<ResponseHeader, 'model' | 'store' | 'previous_response_id'>;

/**
 * The body for an upstream of the dialect. `input` is the caller's own unless a stored conversation continues or
 * an item is given by reference; `items` are the caller's input items as read (one per given item), references
 * resolved.
 */
export function nativeRequest(request: ResponsesRequest, previous: readonly ResponseItem[], items: readonly ResponseItem[]): NativeRequest {
  const { previous_response_id: _previous, ...body } = request;
  const given = request.input;
  const referenced = typeof given !== 'string' && given.some((item) => item.type === 'item_reference');
  if (previous.length === 0 && !referenced) return { dialect: 'openai-responses', body: { ...body, store: false }, headers: {} };
  const own = typeof given === 'string' ? [{ role: 'user', content: given }] : given.map((item, index) => (item.type === 'item_reference' ? items[index] : item));
  return { dialect: 'openai-responses', body: { ...body, input: [...previous.filter(replayable), ...own], store: false }, headers: {} };
}

/**
 * A stored reasoning item goes back only with its encrypted content: with `store: false` upstream an id alone names
 * nothing there (the upstream refuses it), and the model reasons afresh without it.
 */
function replayable(item: ResponseItem): boolean {
  return item.type !== 'reasoning' || typeof item.encrypted_content === 'string';
}

/** The upstream's final Response with the caller's echo; one without an id or an output list is not a Response. */
export function echoed(response: unknown, echo: CallerEcho, provider: string): UpstreamResponseBody {
  const body = response as Record<string, unknown> | null;
  if (typeof body?.id !== 'string' || !Array.isArray(body.output)) {
    throw new InvalidResponseError(`${provider}: upstream response has no id or output list`, { provider });
  }
  return withEcho(body, echo) as UpstreamResponseBody;
}

/** Keys keep their places: only the values change. */
function withEcho(response: object, echo: CallerEcho): Record<string, unknown> {
  return { ...response, model: echo.model, store: echo.store, previous_response_id: echo.previous_response_id };
}

/** The events that carry the whole Response object, the ones whose echo names the caller's request. */
const RESPONSE_EVENTS = new Set(['response.created', 'response.queued', 'response.in_progress', 'response.completed', 'response.incomplete']);
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete']);

/**
 * One upstream stream's events, written as they arrived except for the echo in the events carrying the Response.
 * The final Response is settled (echoed and kept) before its event is written, so it can be stored first.
 */
export class UpstreamResponseEvents {
  /** Events written: OpenAI numbers a stream's events from 0, so this is the sequence number of the next one. */
  private written = 0;
  /** The newest Response object the stream carried, for the `response.failed` that ends a broken stream. */
  private latest?: Record<string, unknown>;
  private settled?: { response: UpstreamResponseBody; data: string };

  constructor(private readonly echo: CallerEcho) {}

  render(events: readonly NativeEvent[]): string {
    let frames = '';
    for (const { event, data } of events) {
      frames += `event: ${event}\ndata: ${RESPONSE_EVENTS.has(event) ? this.echoedEvent(event, data) : data}\n\n`;
      this.written++;
    }
    return frames;
  }

  /** The final Response, named after whoever answered; once per stream. */
  settle(done: Extract<GenerateStreamEvent, { type: 'done' }>): UpstreamResponseBody {
    if (this.settled) return this.settled.response;
    const final = done.native?.find(({ event }) => FINAL_EVENTS.has(event));
    if (!final) throw new InvalidResponseError(`${done.provider}: upstream stream ended without its final response`, { provider: done.provider });
    const parsed = JSON.parse(final.data) as { response: unknown };
    const response = echoed(parsed.response, { ...this.echo, model: qualifiedModel(done.provider, done.model) }, done.provider);
    parsed.response = response;
    this.settled = { response, data: JSON.stringify(parsed) };
    return response;
  }

  failed(error: { code: string; message: string }): string {
    const response = { ...this.latest, status: 'failed', error };
    return sseEvent('response.failed', { type: 'response.failed', sequence_number: this.written, response });
  }

  private echoedEvent(event: string, data: string): string {
    if (this.settled && FINAL_EVENTS.has(event)) return this.settled.data;
    const parsed = JSON.parse(data) as { response: object };
    parsed.response = this.latest = withEcho(parsed.response, this.echo);
    return JSON.stringify(parsed);
  }
}
