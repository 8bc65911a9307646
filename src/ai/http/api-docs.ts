import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiProduces } from '@nestjs/swagger';

const USAGE = {
  type: 'object',
  properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
};

/** The answer of the generate routes without `stream` (docs/gateway.md, REST API). */
const GENERATION_SCHEMA = {
  type: 'object',
  required: ['response', 'provider', 'model', 'request_id'],
  properties: {
    response: { type: 'string' },
    provider: { type: 'string' },
    model: { type: 'string' },
    finish_reason: { type: 'string' },
    usage: USAGE,
    request_id: { type: 'string' },
  },
};

const EVENT_STREAM_EXAMPLE = [
  'event: delta',
  'data: {"text":"Hel"}',
  '',
  'event: delta',
  'data: {"text":"lo"}',
  '',
  'event: done',
  'data: {"provider":"openai","model":"gpt-4o-mini","finish_reason":"stop","usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11},"request_id":"..."}',
  '',
  '',
].join('\n');

/** What /v1/search/generate adds: the search itself, in the body and as the stream's first event. */
const SEARCH_PROPERTIES = {
  tool: { type: 'string' },
  source: { type: 'string' },
  query: { type: 'string' },
  results: { type: 'array', items: { type: 'object' } },
  count: { type: 'integer' },
};

/**
 * A generate route's two answers: the JSON body, or with `"stream": true` server-sent events (`delta`
 * events, then one `done` or one `error` event carrying the error envelope); with `search`, the body also
 * holds the search results and the stream opens with one `results` event.
 */
export function ApiGenerationResponses(options: { search?: boolean } = {}): MethodDecorator {
  const properties = options.search ? { ...SEARCH_PROPERTIES, ...GENERATION_SCHEMA.properties } : GENERATION_SCHEMA.properties;
  const events = options.search ? 'one results event, then delta events' : 'delta events';
  return applyDecorators(
    ApiProduces('application/json', 'text/event-stream'),
    ApiOkResponse({
      description: `The generated text, or with "stream": true server-sent events: ${events}, then one done event (or one error event).`,
      content: {
        'application/json': { schema: { ...GENERATION_SCHEMA, properties } },
        'text/event-stream': { schema: { type: 'string' }, example: EVENT_STREAM_EXAMPLE },
      },
    }),
  );
}
