/** Stream framing of upstream bodies: text lines, server-sent events and newline-delimited JSON. */
import { StringDecoder } from 'node:string_decoder';
import { InvalidResponseError } from '../common/errors';
import { isObject } from '../common/json-values';
import { parseJson } from './upstream-errors';

/** A single streamed line longer than this is refused rather than buffered without end. */
export const MAX_STREAM_LINE_CHARS = 1024 * 1024;

/** Splits a byte stream into text lines (LF or CRLF), decoding UTF-8 across chunk boundaries. */
export async function* readLines(body: AsyncIterable<Buffer | string>, provider = 'upstream'): AsyncGenerator<string> {
  // StringDecoder rather than TextDecoder: the same UTF-8 handling across chunk boundaries, without an ICU
  // converter set up per stream (~3.2 against ~0.9 us for a short streamed answer).
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of body) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      yield line.endsWith('\r') ? line.slice(0, -1) : line;
    }
    if (pending.length > MAX_STREAM_LINE_CHARS) {
      throw new InvalidResponseError(`${provider}: upstream stream line exceeded ${MAX_STREAM_LINE_CHARS} characters`, {
        provider,
      });
    }
  }
  pending += decoder.end();
  if (pending !== '') yield pending.endsWith('\r') ? pending.slice(0, -1) : pending;
}

export interface SseEvent {
  event?: string;
  data: string;
}

/** Server-sent events per the WHATWG framing: `data:` lines joined by newlines, dispatched on a blank line. */
export async function* readSseEvents(body: AsyncIterable<Buffer | string>, provider?: string): AsyncGenerator<SseEvent> {
  let data: string[] = [];
  let event: string | undefined;
  for await (const line of readLines(body, provider)) {
    if (line === '') {
      if (data.length > 0) yield { event, data: data.join('\n') };
      data = [];
      event = undefined;
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  }
  if (data.length > 0) yield { event, data: data.join('\n') };
}

/**
 * Server-sent events as readSseEvents frames them, handed over as the events each read of the body completed:
 * a consumer that relays events can pass on one batch in one step without holding any back.
 */
export async function* readSseEventBatches(body: AsyncIterable<Buffer | string>, provider = 'upstream'): AsyncGenerator<SseEvent[]> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let data: string[] = [];
  let event: string | undefined;
  let batch: SseEvent[] = [];
  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0) batch.push({ event, data: data.join('\n') });
      data = [];
      event = undefined;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  };
  for await (const chunk of body) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let start = 0;
    let newline: number;
    while ((newline = pending.indexOf('\n', start)) >= 0) {
      line(pending.charCodeAt(newline - 1) === 0x0d && newline > start ? pending.slice(start, newline - 1) : pending.slice(start, newline));
      start = newline + 1;
    }
    pending = pending.slice(start);
    if (pending.length > MAX_STREAM_LINE_CHARS) {
      throw new InvalidResponseError(`${provider}: upstream stream line exceeded ${MAX_STREAM_LINE_CHARS} characters`, { provider });
    }
    if (batch.length > 0) {
      yield batch;
      batch = [];
    }
  }
  pending += decoder.end();
  if (pending !== '') line(pending.endsWith('\r') ? pending.slice(0, -1) : pending);
  if (data.length > 0) batch.push({ event, data: data.join('\n') });
  if (batch.length > 0) yield batch;
}

/** Newline-delimited JSON objects (Ollama streaming); blank lines are skipped. */
export async function* readNdjson(body: AsyncIterable<Buffer | string>, provider: string): AsyncGenerator<unknown> {
  for await (const line of readLines(body, provider)) {
    if (line.trim() === '') continue;
    yield parseJson(line, provider);
  }
}

/** A stream event's data as a JSON object; anything else is InvalidResponseError, without the parser's message. */
export function parseEventObject(data: string, provider: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(data);
    if (isObject(parsed)) return parsed;
  } catch {
    // Falls through to the typed error below.
  }
  throw new InvalidResponseError(`${provider}: upstream sent a malformed stream event`, { provider });
}
