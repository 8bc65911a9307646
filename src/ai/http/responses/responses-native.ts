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
 * One upstream stream's events, written as they arrived except for the echo in the events carrying the Response,
 * which is replaced in their text (echoedText) rather than parsed and written anew. The final Response is settled
 * (echoed and kept) before its event is written, so it can be stored first; it is read from the adapter's own
 * parse of the event.
 */
export class UpstreamResponseEvents {
  /** Events written: OpenAI numbers a stream's events from 0, so this is the sequence number of the next one. */
  private written = 0;
  /** The newest Response-carrying event as written, parsed only for the `response.failed` that ends a broken stream. */
  private latest?: string;
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
    const parsed = (final.parsed ?? JSON.parse(final.data)) as { response: unknown };
    const echo = { ...this.echo, model: qualifiedModel(done.provider, done.model) };
    const response = echoed(parsed.response, echo, done.provider);
    this.settled = { response, data: echoedText(final.data, echo) ?? JSON.stringify({ ...parsed, response }) };
    return response;
  }

  failed(error: { code: string; message: string }): string {
    const latest = this.latest === undefined ? undefined : (JSON.parse(this.latest) as { response: object }).response;
    const response = { ...latest, status: 'failed', error };
    return sseEvent('response.failed', { type: 'response.failed', sequence_number: this.written, response });
  }

  private echoedEvent(event: string, data: string): string {
    if (this.settled && FINAL_EVENTS.has(event)) return this.settled.data;
    let written = echoedText(data, this.echo);
    if (written === undefined) {
      const parsed = JSON.parse(data) as { response: object };
      parsed.response = withEcho(parsed.response, this.echo);
      written = JSON.stringify(parsed);
    }
    this.latest = written;
    return written;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const ECHO_KEYS = ['model', 'store', 'previous_response_id'] as const;

/**
 * An event's data with the echo replaced in the text of its `response`, every other byte as it came: the values of
 * the Response's own `model`, `store` and `previous_response_id`, found by their depth, so the same keys inside
 * tools, schemas, metadata or output items stay as they are. Read up to the third of them only. Undefined when the
 * text is not laid out so (one of the keys missing or repeated before that, or holding an object or a list): the
 * caller parses the event then.
 */
export function echoedText(data: string, echo: CallerEcho): string | undefined {
  const spans: Array<[key: (typeof ECHO_KEYS)[number], start: number, end: number]> = [];
  let depth = 0;
  /** Whether the object open at depth 2 is the value of the event's `response`. */
  let inResponse = false;
  /** Whether the last key read at depth 1 was `response`. */
  let responseKey = false;
  for (let at = 0; at < data.length; at++) {
    const char = data.charCodeAt(at);
    if (char === QUOTE) {
      const end = stringEnd(data, at + 1);
      if (end === -1) return undefined;
      const colon = skipSpace(data, end + 1);
      if (data.charCodeAt(colon) === COLON && (depth === 1 || (depth === 2 && inResponse))) {
        // A key spelled with escapes is one JSON.parse would read as another name.
        if (escaped(data, at + 1, end)) return undefined;
        const key = echoKey(data, at + 1, end);
        if (depth === 1) responseKey = data.startsWith('response"', at + 1);
        else if (key !== undefined) {
          const start = skipSpace(data, colon + 1);
          const valueEnd = scalarEnd(data, start);
          if (valueEnd === -1 || spans.some(([seen]) => seen === key)) return undefined;
          spans.push([key, start, valueEnd]);
          // The rest (output items, tools, usage: most of a final Response) is not read: a key given twice after
          // all three were found would be the one JSON.parse keeps, which no Responses API writes.
          if (spans.length === ECHO_KEYS.length) break;
          at = valueEnd - 1;
          continue;
        }
      }
      at = end;
    } else if (char === 0x7b || char === 0x5b) {
      depth++;
      if (depth === 2) inResponse = char === 0x7b && responseKey;
    } else if (char === 0x7d || char === 0x5d) {
      depth--;
    }
  }
  if (spans.length !== ECHO_KEYS.length) return undefined;
  let text = '';
  let from = 0;
  for (const [key, start, end] of spans) {
    text += data.slice(from, start) + JSON.stringify(echo[key]);
    from = end;
  }
  return text + data.slice(from);
}

/** Which echo key the key text from `start` to the quote at `end` is, if any; compared in place, not sliced. */
function echoKey(text: string, start: number, end: number): (typeof ECHO_KEYS)[number] | undefined {
  for (const key of ECHO_KEYS) if (end - start === key.length && text.startsWith(key, start)) return key;
  return undefined;
}

function escaped(text: string, start: number, end: number): boolean {
  for (let at = start; at < end; at++) if (text.charCodeAt(at) === BACKSLASH) return true;
  return false;
}

/** The index of the quote that closes the JSON string whose text starts at `from`, or -1. */
function stringEnd(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

/** The index after a string, number or literal starting at `start`; -1 for an object or a list. */
function scalarEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) {
    const end = stringEnd(text, start + 1);
    return end === -1 ? -1 : end + 1;
  }
  if (first === 0x7b || first === 0x5b || Number.isNaN(first)) return -1;
  let at = start;
  while (at < text.length && !DELIMITERS.has(text.charCodeAt(at))) at++;
  return at;
}

/** What ends a number or a literal: a comma, a closing bracket or whitespace. */
const DELIMITERS = new Set([0x2c, 0x7d, 0x5d, 0x20, 0x09, 0x0a, 0x0d]);

function skipSpace(text: string, from: number): number {
  let at = from;
  while (at < text.length) {
    const char = text.charCodeAt(at);
    if (char !== 0x20 && char !== 0x09 && char !== 0x0a && char !== 0x0d) break;
    at++;
  }
  return at;
}
