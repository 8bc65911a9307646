import type { Server } from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { InvalidRequestError } from '../common/errors';

/** Deepest nesting of arrays and objects a JSON request body may have (docs/decisions.md C6). */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;

/** A body nested deeper than MAX_JSON_DEPTH: 400 in each surface's own error shape. */
export class JsonTooDeepError extends InvalidRequestError {
  override readonly type: string = 'json_too_deep';

  constructor() {
    super(`The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`);
  }
}

/**
 * A body holding more values than `server.json_value_limit`: 400 in each surface's own error shape, before
 * the parser turns millions of tiny values (`[{},{},...]`) into gigabytes of objects.
 */
export class JsonTooManyValuesError extends InvalidRequestError {
  override readonly type: string = 'json_too_many_values';

  constructor(limit: number) {
    super(`The request body holds more than ${limit} JSON values (server.json_value_limit).`);
  }
}

/** The bound a JSON body passes or the first one it exceeds. */
export type JsonBound = 'depth' | 'values';

/** Bytes of a string read one by one before a native search for its end: most keys end sooner. */
const SHORT_STRING = 32;

/**
 * The first bound `body` exceeds, or undefined: more than `maxDepth` arrays or objects open inside one another,
 * or more than `maxValues` values. One pass over the bytes, no recursion: brackets and commas are counted
 * outside strings, and the bytes looked at are ASCII, which never occur inside a UTF-8 multi-byte sequence.
 * Every value but the root follows an opening bracket or a comma, so one plus their count bounds the values
 * from above (an object's member, key and value, counts as one). It does not validate; JSON.parse does that
 * afterwards. For valid JSON the depth count is the nesting depth; invalid JSON is refused by the parser
 * whatever the counts.
 */
export function exceededJsonBound(body: Uint8Array, maxDepth: number, maxValues: number): JsonBound | undefined {
  let depth = 0;
  let values = 1;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index];
    if (byte === QUOTE) {
      index = closingQuote(body, index + 1);
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > maxDepth) return 'depth';
      if (++values > maxValues) return 'values';
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--;
    } else if (byte === COMMA && ++values > maxValues) {
      return 'values';
    }
  }
  return undefined;
}

/**
 * Index of the quote that ends the string starting at `from` (the body's length when none does). Bytes are
 * read one by one for a while, then the next quote is searched with the native indexOf (a quote is escaped
 * when an odd run of backslashes precedes it), so a long prompt costs one native search and a string full
 * of escaped quotes still costs at most one search per SHORT_STRING bytes.
 */
function closingQuote(body: Uint8Array, from: number): number {
  let index = from;
  for (;;) {
    const shortEnd = Math.min(body.length, index + SHORT_STRING);
    for (; index < shortEnd; index++) {
      const byte = body[index];
      if (byte === QUOTE) return index;
      if (byte === BACKSLASH) index++;
    }
    if (index >= body.length) return body.length;
    const quote = body.indexOf(QUOTE, index);
    if (quote < 0) return body.length;
    // `index` is never an escaped byte, so the run of backslashes that counts starts at or after it.
    let backslash = quote - 1;
    while (backslash >= index && body[backslash] === BACKSLASH) backslash--;
    if ((quote - 1 - backslash) % 2 === 0) return quote;
    index = quote + 1;
  }
}

/**
 * The server application's JSON body parser: Fastify's own (prototype-poisoning checks included), after a
 * depth and value count, so a hostile body is refused before any validator walks it recursively (20,000
 * levels overflowed class-validator's stack) and before the parser expands it (20 MiB of `[{},{},...]` became
 * gigabytes of objects). Only `application/json` bodies are parsed; other types get 415.
 */
export function useBoundedJsonParser(app: NestFastifyApplication, bodyLimit: number, valueLimit: number): void {
  const fastify = app.getHttpAdapter().getInstance();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  // Fastify parses text/plain by default; a string body then reached validation as the whole DTO.
  fastify.removeContentTypeParser('text/plain');
  app.useBodyParser<Server>('application/json', { bodyLimit }, (request, body, done) => {
    const exceeded = exceededJsonBound(body, MAX_JSON_DEPTH, valueLimit);
    if (exceeded !== undefined) {
      done(exceeded === 'depth' ? new JsonTooDeepError() : new JsonTooManyValuesError(valueLimit), undefined);
      return;
    }
    // Fastify's parser takes a Buffer as well as a string (secure-json-parse decodes it).
    parseJson(request, body as unknown as string, done);
  });
}

/** The routes whose bodies carry base64 images, as path suffixes under any `base_path`. */
const CHAT_ROUTE_SUFFIXES = ['/v1/generate', '/openai/v1/chat/completions', '/openai/v1/responses', '/anthropic/v1/messages', '/gemini/v1beta/models/*'];

/**
 * Gives the chat routes their own body limit (`server.chat_body_limit`); every other route keeps the parser's.
 * A route's own bodyLimit wins over the parser's in Fastify, so this must run before Nest registers routes.
 */
export function useChatBodyLimit(app: NestFastifyApplication, chatBodyLimit: number): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.includes('POST') && CHAT_ROUTE_SUFFIXES.some((suffix) => route.url.endsWith(suffix))) route.bodyLimit = chatBodyLimit;
    });
}
