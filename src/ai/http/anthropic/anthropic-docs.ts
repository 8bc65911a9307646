/**
 * OpenAPI descriptions of the /anthropic/v1 operations. Request bodies are the JSON Schemas the routes validate
 * with (anthropic-requests.ts; content blocks are checked by the mapping, so they appear as objects with a
 * `type`); answers are the shapes anthropic-responses.ts builds.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiDefaultResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces } from '@nestjs/swagger';
import { toOpenApi30 } from '../openai/openai-docs';
import { COUNT_TOKENS_SCHEMA, MESSAGES_SCHEMA } from './anthropic-requests';

const USAGE = {
  type: 'object',
  required: ['input_tokens', 'output_tokens'],
  properties: {
    input_tokens: { type: 'integer', description: 'Input tokens not read from the cache' },
    output_tokens: { type: 'integer' },
    cache_creation_input_tokens: { type: 'integer', description: 'Input tokens written to the prompt cache' },
    cache_read_input_tokens: { type: 'integer', description: 'Input tokens read from the prompt cache' },
    cache_creation: {
      type: 'object',
      properties: { ephemeral_5m_input_tokens: { type: 'integer' }, ephemeral_1h_input_tokens: { type: 'integer' } },
    },
  },
};

const MESSAGE = {
  type: 'object',
  required: ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage'],
  properties: {
    id: { type: 'string', example: 'msg_0f8e…' },
    type: { type: 'string', enum: ['message'] },
    role: { type: 'string', enum: ['assistant'] },
    model: { type: 'string', description: 'The model as the request named it' },
    content: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string', enum: ['text', 'tool_use'] },
          text: { type: 'string' },
          id: { type: 'string' },
          name: { type: 'string' },
          input: { type: 'object' },
        },
      },
    },
    stop_reason: { type: 'string', enum: ['end_turn', 'max_tokens', 'tool_use', 'pause_turn', 'refusal'] },
    stop_sequence: { type: 'string', nullable: true },
    usage: USAGE,
  },
};

const STREAM_EXAMPLE = [
  'event: message_start',
  'data: {"type":"message_start","message":{"id":"msg_…","type":"message","role":"assistant","model":"openai/gpt-4o-mini","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0}}}}',
  '',
  'event: ping',
  'data: {"type":"ping"}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}',
  '',
  'event: content_block_stop',
  'data: {"type":"content_block_stop","index":0}',
  '',
  'event: message_delta',
  'data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":12,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0}}}',
  '',
  'event: message_stop',
  'data: {"type":"message_stop"}',
  '',
  '',
].join('\n');

const MODEL = {
  type: 'object',
  required: ['type', 'id', 'display_name', 'created_at'],
  properties: {
    type: { type: 'string', enum: ['model'] },
    id: { type: 'string', description: '`provider/model` or an alias: the value `model` takes' },
    display_name: { type: 'string' },
    created_at: { type: 'string', format: 'date-time', description: 'The epoch: providers do not all report a date' },
  },
};

const ERROR = {
  type: 'object',
  required: ['type', 'error'],
  properties: {
    type: { type: 'string', enum: ['error'] },
    error: {
      type: 'object',
      required: ['type', 'message'],
      properties: { type: { type: 'string', example: 'invalid_request_error' }, message: { type: 'string' } },
    },
  },
};

const ERROR_RESPONSE = ApiDefaultResponse({ description: "An error in Anthropic's shape", content: { 'application/json': { schema: ERROR } } });

export function ApiMessagesDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'Anthropic Messages; `model` is an alias, `provider/model`, or a model a provider is configured with, on any provider kind' }),
    ApiBody({ schema: toOpenApi30(MESSAGES_SCHEMA) }),
    ApiProduces('application/json', 'text/event-stream'),
    ApiOkResponse({
      description: "The Message, or with \"stream\": true Anthropic's server-sent events from message_start to message_stop",
      content: { 'application/json': { schema: MESSAGE }, 'text/event-stream': { schema: { type: 'string' }, example: STREAM_EXAMPLE } },
    }),
    ERROR_RESPONSE,
  );
}

export function ApiCountTokensDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: "The request's input tokens: Anthropic's own count for a model that routes to Anthropic, the gateway's estimate (4 characters per token) for every other kind" }),
    ApiBody({ schema: toOpenApi30(COUNT_TOKENS_SCHEMA) }),
    ApiOkResponse({ description: "Anthropic's count as it answered, or the estimate", content: { 'application/json': { schema: { type: 'object', required: ['input_tokens'], properties: { input_tokens: { type: 'integer' } } } } } }),
    ERROR_RESPONSE,
  );
}

export function ApiAnthropicModelsDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: "Every provider's models as provider/model ids, then the aliases, as the caller's allow-lists admit them" }),
    ApiOkResponse({
      description: "Anthropic's model list, on one page",
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['data', 'has_more', 'first_id', 'last_id'],
            properties: { data: { type: 'array', items: MODEL }, has_more: { type: 'boolean' }, first_id: { type: 'string', nullable: true }, last_id: { type: 'string', nullable: true } },
          },
        },
      },
    }),
    ERROR_RESPONSE,
  );
}

export function ApiAnthropicModelDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'One model by any name `model` takes; 404 not_found_error when unknown or not allowed for the caller' }),
    // Nest's document writes the route's trailing wildcard as {path}.
    ApiParam({ name: 'path', description: 'The model id, slashes included (e.g. openai/gpt-4o)' }),
    ApiOkResponse({ description: "Anthropic's model object", content: { 'application/json': { schema: MODEL } } }),
    ERROR_RESPONSE,
  );
}
