/**
 * OpenAPI descriptions of /openai/v1/responses. The request body is the JSON Schema the route validates with
 * (responses-requests.ts), rewritten for OpenAPI 3.0; the answers are OpenAI's Response object and list shapes.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProduces } from '@nestjs/swagger';
import { ERROR_RESPONSE, toOpenApi30 } from '../openai/openai-docs';
import { RESPONSES_SCHEMA } from './responses-requests';

const RESPONSE = {
  type: 'object',
  required: ['id', 'object', 'created_at', 'status', 'model', 'output'],
  properties: {
    id: { type: 'string', example: 'resp_0f8e…' },
    object: { type: 'string', enum: ['response'] },
    created_at: { type: 'integer', description: 'Unix seconds' },
    status: { type: 'string', enum: ['completed', 'incomplete', 'failed', 'in_progress'] },
    model: { type: 'string', description: '`provider/model` of whoever answered', example: 'anthropic/claude-haiku-4-5' },
    output: { type: 'array', items: { type: 'object', description: 'A message item with output_text content, or a function_call item' } },
    incomplete_details: { type: 'object', nullable: true },
    usage: { type: 'object', nullable: true },
  },
};

const STREAM_EXAMPLE = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{…}}\n\n… response.output_text.delta …\n\nevent: response.completed\ndata: {"type":"response.completed","sequence_number":9,"response":{…}}\n\n';

const ID = ApiParam({ name: 'id', description: 'A stored response id (resp_…) of the caller\'s tenant' });

export function ApiCreateResponseDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: "OpenAI Responses API: create a response on any provider; `model` is an alias, `provider/model`, or a configured model" }),
    ApiBody({ schema: toOpenApi30(RESPONSES_SCHEMA) }),
    ApiProduces('application/json', 'text/event-stream'),
    ApiOkResponse({
      description: 'The Response, or with "stream": true its server-sent events, ending with response.completed, response.incomplete or response.failed',
      content: { 'application/json': { schema: RESPONSE }, 'text/event-stream': { schema: { type: 'string' }, example: STREAM_EXAMPLE } },
    }),
    ERROR_RESPONSE,
  );
}

export function ApiRetrieveResponseDocs(): MethodDecorator {
  return applyDecorators(ApiOperation({ summary: 'A stored response; 404 when unknown, expired, deleted or another tenant\'s' }), ID, ApiOkResponse({ content: { 'application/json': { schema: RESPONSE } } }), ERROR_RESPONSE);
}

export function ApiDeleteResponseDocs(): MethodDecorator {
  return applyDecorators(ApiOperation({ summary: 'Deletes a stored response' }), ID, ApiOkResponse({ description: '{id, object: "response", deleted: true}' }), ERROR_RESPONSE);
}

export function ApiInputItemsDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: "A stored response's input items, newest first unless order=asc (limit 1-100, after an item id)" }),
    ID,
    ApiOkResponse({ description: '{object: "list", data, first_id, last_id, has_more}' }),
    ERROR_RESPONSE,
  );
}
