/**
 * OpenAPI descriptions of the /openai/v1 operations. Request bodies are the JSON Schemas the routes validate
 * with (openai-requests.ts), rewritten for OpenAPI 3.0; answers are the shapes openai-responses.ts builds.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiDefaultResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces } from '@nestjs/swagger';
import { CHAT_SCHEMA, EMBEDDINGS_SCHEMA } from './openai-requests';

type Schema = Record<string, unknown>;

const USAGE = {
  type: 'object',
  required: ['prompt_tokens', 'total_tokens'],
  properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
};

const MODEL_ID = { type: 'string', description: '`provider/model` of whoever answered', example: 'openai/gpt-4o-mini' };

const CHAT_COMPLETION = {
  type: 'object',
  required: ['id', 'object', 'created', 'model', 'choices'],
  properties: {
    id: { type: 'string', example: 'chatcmpl-0f8e…' },
    object: { type: 'string', enum: ['chat.completion'] },
    created: { type: 'integer', description: 'Unix seconds' },
    model: MODEL_ID,
    choices: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'message', 'finish_reason'],
        properties: {
          index: { type: 'integer' },
          message: {
            type: 'object',
            required: ['role', 'content'],
            properties: { role: { type: 'string', enum: ['assistant'] }, content: { type: 'string' }, refusal: { type: 'string', nullable: true } },
          },
          logprobs: { type: 'object', nullable: true },
          finish_reason: { type: 'string', enum: ['stop', 'length', 'content_filter'] },
        },
      },
    },
    usage: USAGE,
  },
};

const CHAT_STREAM_EXAMPLE = [
  'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","created":1700000000,"model":"openai/gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}',
  '',
  'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","created":1700000000,"model":"openai/gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}',
  '',
  'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","created":1700000000,"model":"openai/gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}',
  '',
  'data: [DONE]',
  '',
  '',
].join('\n');

const EMBEDDINGS = {
  type: 'object',
  required: ['object', 'data', 'model', 'usage'],
  properties: {
    object: { type: 'string', enum: ['list'] },
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['object', 'index', 'embedding'],
        properties: {
          object: { type: 'string', enum: ['embedding'] },
          index: { type: 'integer' },
          embedding: {
            description: 'numbers, or with encoding_format "base64" the little-endian float32 bytes in base64',
            oneOf: [{ type: 'array', items: { type: 'number' } }, { type: 'string', format: 'byte' }],
          },
        },
      },
    },
    model: MODEL_ID,
    usage: USAGE,
  },
};

const MODEL = {
  type: 'object',
  required: ['id', 'object', 'created', 'owned_by'],
  properties: {
    id: { ...MODEL_ID, description: '`provider/model` or an alias: the value `model` takes' },
    object: { type: 'string', enum: ['model'] },
    created: { type: 'integer', description: '0: providers do not all report one' },
    owned_by: { type: 'string', description: 'The provider; `tollgate` for an alias' },
  },
};

const MODELS = {
  type: 'object',
  required: ['object', 'data'],
  properties: {
    object: { type: 'string', enum: ['list'] },
    data: { type: 'array', items: MODEL },
  },
};

const ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: {
        message: { type: 'string' },
        type: { type: 'string', example: 'invalid_request_error' },
        param: { type: 'string', nullable: true },
        code: { type: 'string', nullable: true },
      },
    },
  },
};

export const ERROR_RESPONSE = ApiDefaultResponse({ description: "An error in OpenAI's shape", content: { 'application/json': { schema: ERROR } } });

export function ApiChatCompletionDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'OpenAI chat completions; `model` is an alias, `provider/model`, or a model a provider is configured with' }),
    ApiBody({ schema: toOpenApi30(CHAT_SCHEMA) }),
    ApiProduces('application/json', 'text/event-stream'),
    ApiOkResponse({
      description: 'The completion, or with "stream": true server-sent chat.completion.chunk events ending with data: [DONE]',
      content: {
        'application/json': { schema: CHAT_COMPLETION },
        'text/event-stream': { schema: { type: 'string' }, example: CHAT_STREAM_EXAMPLE },
      },
    }),
    ERROR_RESPONSE,
  );
}

export function ApiEmbeddingsDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'OpenAI embeddings; `model` is an alias, `provider/model`, or a model a provider is configured with' }),
    ApiBody({ schema: toOpenApi30(EMBEDDINGS_SCHEMA) }),
    ApiOkResponse({ description: 'One embedding per input, in input order', content: { 'application/json': { schema: EMBEDDINGS } } }),
    ERROR_RESPONSE,
  );
}

export function ApiModelsDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: "Every provider's models as provider/model ids, then the aliases (a provider whose listing fails is left out)" }),
    ApiOkResponse({ description: 'The model list', content: { 'application/json': { schema: MODELS } } }),
    ERROR_RESPONSE,
  );
}

export function ApiModelDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'One model: an alias, a configured model, or provider/model (looked up in that provider\'s listing); 404 model_not_found otherwise' }),
    // Nest's document writes the route's trailing wildcard as {path}.
    ApiParam({ name: 'path', description: 'The model id, slashes included (e.g. openai/gpt-4o)' }),
    ApiOkResponse({ description: "OpenAI's model object", content: { 'application/json': { schema: MODEL } } }),
    ERROR_RESPONSE,
  );
}

const KEYWORDS_OF_TYPE: Record<string, string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  array: ['items', 'minItems', 'maxItems'],
  object: ['properties', 'required', 'additionalProperties'],
};

/**
 * JSON Schema as Ajv takes it -> OpenAPI 3.0: `true` is `{}`, `const` an one-value `enum`, a list of types
 * `oneOf` one schema per type (each with that type's keywords) or `nullable` for `null`.
 */
export function toOpenApi30(schema: unknown): Schema {
  if (schema === true) return {};
  const source = schema as Schema;
  const converted: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'const') converted.enum = [value];
    else if (key === 'properties') converted.properties = Object.fromEntries(Object.entries(value as Schema).map(([name, sub]) => [name, toOpenApi30(sub)]));
    else if (key === 'items' || key === 'additionalProperties') converted[key] = typeof value === 'object' ? toOpenApi30(value) : value;
    else if (key === 'allOf' || key === 'oneOf' || key === 'anyOf') converted[key] = (value as unknown[]).map(toOpenApi30);
    else converted[key] = value;
  }
  if (!Array.isArray(converted.type)) return converted;
  const types = (converted.type as string[]).filter((type) => type !== 'null');
  const nullable = types.length < (converted.type as string[]).length ? { nullable: true } : {};
  const typed = Object.keys(KEYWORDS_OF_TYPE).flatMap((type) => KEYWORDS_OF_TYPE[type]);
  const shared = Object.fromEntries(Object.entries(converted).filter(([key]) => key !== 'type' && !typed.includes(key)));
  const variant = (type: string) => ({ type, ...Object.fromEntries(Object.entries(converted).filter(([key]) => (KEYWORDS_OF_TYPE[type] ?? []).includes(key))) });
  if (types.length === 1) return { ...shared, ...variant(types[0]), ...nullable };
  return { ...shared, ...nullable, oneOf: types.map(variant) };
}
