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
    finish_reason: { type: 'string', description: 'stop, length, tool_calls, content_filter, or the provider\'s own word' },
    usage: USAGE,
    tool_calls: {
      type: 'array',
      description: 'The calls the model asks for, in order (finish_reason tool_calls)',
      items: {
        type: 'object',
        required: ['id', 'name', 'arguments'],
        properties: { id: { type: 'string' }, name: { type: 'string' }, arguments: { type: 'string', description: 'The arguments object as JSON text' } },
      },
    },
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
  'event: tool_call',
  'data: {"index":0,"id":"call_1","name":"get_weather","arguments":""}',
  '',
  'event: tool_call',
  'data: {"index":0,"arguments":"{\\"city\\":\\"Paris\\"}"}',
  '',
  'event: done',
  'data: {"provider":"openai","model":"gpt-4o-mini","finish_reason":"tool_calls","usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11},"request_id":"..."}',
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
 * A generate route's two answers: the JSON body, or with `"stream": true` server-sent events (`delta` and
 * `tool_call` events, then one `done` or one `error` event carrying the error envelope); with `search`, the body also
 * holds the search results and the stream opens with one `results` event.
 */
export function ApiGenerationResponses(options: { search?: boolean } = {}): MethodDecorator {
  const properties = options.search ? { ...SEARCH_PROPERTIES, ...GENERATION_SCHEMA.properties } : GENERATION_SCHEMA.properties;
  const events = options.search ? 'one results event, then delta and tool_call events' : 'delta and tool_call events';
  return applyDecorators(
    ApiProduces('application/json', 'text/event-stream'),
    ApiOkResponse({
      description:
        `The generated text (or tool_calls), or with "stream": true server-sent events: ${events}, then one done event (or one error event). ` +
        'delta: {text}; tool_call: {index, id?, name?, arguments?}, the first event of a call naming it, later ones of the same index adding argument text.',
      content: {
        'application/json': { schema: { ...GENERATION_SCHEMA, properties } },
        'text/event-stream': { schema: { type: 'string' }, example: EVENT_STREAM_EXAMPLE },
      },
    }),
  );
}
