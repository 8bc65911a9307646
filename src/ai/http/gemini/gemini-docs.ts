/**
 * OpenAPI descriptions of the /gemini/v1beta operations. One POST route serves `models/{model}:{method}` for the
 * three methods, so its body is either request schema the route validates with (gemini-requests.ts) and its
 * answer any of the three shapes gemini-answers.ts builds.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiDefaultResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery } from '@nestjs/swagger';
import { toOpenApi30 } from '../openai/openai-docs';
import { GENERATION_METHODS } from './gemini-answers';
import { COUNT_TOKENS_SCHEMA, GENERATE_CONTENT_SCHEMA } from './gemini-requests';

const PART = {
  type: 'object',
  description: 'A text part, or a function call (with the thought signature a Gemini upstream gave it)',
  properties: {
    text: { type: 'string' },
    functionCall: { type: 'object', required: ['name', 'args'], properties: { name: { type: 'string' }, args: { type: 'object' } } },
    thoughtSignature: { type: 'string' },
  },
};

const USAGE_METADATA = {
  type: 'object',
  required: ['promptTokenCount', 'candidatesTokenCount', 'totalTokenCount'],
  properties: {
    promptTokenCount: { type: 'integer', description: 'Cached tokens included' },
    candidatesTokenCount: { type: 'integer', description: 'The answer, thinking excluded' },
    totalTokenCount: { type: 'integer' },
    cachedContentTokenCount: { type: 'integer' },
    thoughtsTokenCount: { type: 'integer' },
  },
};

const GENERATE_CONTENT_RESPONSE = {
  type: 'object',
  required: ['candidates', 'modelVersion', 'responseId'],
  properties: {
    candidates: {
      type: 'array',
      items: {
        type: 'object',
        required: ['content', 'index'],
        properties: {
          content: { type: 'object', required: ['role', 'parts'], properties: { role: { type: 'string', enum: ['model'] }, parts: { type: 'array', items: PART } } },
          finishReason: { type: 'string', example: 'STOP', description: 'STOP, MAX_TOKENS, SAFETY, OTHER or a Gemini upstream\'s own reason' },
          index: { type: 'integer', enum: [0] },
        },
      },
    },
    usageMetadata: USAGE_METADATA,
    modelVersion: { type: 'string', description: '`provider/model` of whoever answered' },
    responseId: { type: 'string' },
  },
};

const COUNT_TOKENS_RESPONSE = {
  type: 'object',
  required: ['totalTokens'],
  properties: { totalTokens: { type: 'integer', description: "The gateway's own estimate, the one budgets reserve with, for every provider kind" } },
};

const STREAM_EXAMPLE = [
  'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"index":0}],"modelVersion":"openai/gpt-4o-mini","responseId":"mF3k…"}',
  '',
  'data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4},"modelVersion":"openai/gpt-4o-mini","responseId":"mF3k…"}',
  '',
  '',
].join('\n');

const MODEL = {
  type: 'object',
  required: ['name', 'baseModelId', 'version', 'displayName', 'description', 'supportedGenerationMethods'],
  properties: {
    name: { type: 'string', example: 'models/openai/gpt-4o', description: '`models/` and `provider/model` or an alias: what the path takes' },
    baseModelId: { type: 'string' },
    version: { type: 'string', description: 'The provider that owns it, or `tollgate` for an alias' },
    displayName: { type: 'string' },
    description: { type: 'string' },
    supportedGenerationMethods: { type: 'array', items: { type: 'string', enum: [...GENERATION_METHODS] } },
  },
};

const ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'status'],
      properties: {
        code: { type: 'integer', example: 400 },
        message: { type: 'string' },
        status: { type: 'string', example: 'INVALID_ARGUMENT', description: "Google's canonical code" },
        details: { type: 'array', items: { type: 'object' }, description: 'A spent budget or rate limit: google.rpc.QuotaFailure, ErrorInfo and RetryInfo' },
      },
    },
  },
};

const ERROR_RESPONSE = ApiDefaultResponse({ description: "An error in Google's shape", content: { 'application/json': { schema: ERROR } } });

/** Nest's document writes the route's trailing wildcard as {path}. */
const MODEL_PATH = (description: string) => ApiParam({ name: 'path', description });

export function ApiGeminiCallDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      summary:
        'Gemini generateContent, streamGenerateContent and countTokens; the model is an alias, `provider/model`, or a model a provider is configured with, on any provider kind',
    }),
    MODEL_PATH('`{model}:{method}`: the model (slashes and colons included, e.g. openai/gpt-4o or ollama/llama3.2:3b), then after the last colon generateContent, streamGenerateContent or countTokens'),
    ApiQuery({ name: 'alt', required: false, enum: ['sse'], description: 'With streamGenerateContent: server-sent events; without it the stream is one JSON array' }),
    ApiQuery({ name: 'key', required: false, description: 'The API credential, as Google takes it (x-goog-api-key or Authorization: Bearer work too)' }),
    ApiBody({
      description: 'A GenerateContentRequest (generateContent, streamGenerateContent) or a CountTokensRequest (countTokens)',
      schema: { oneOf: [toOpenApi30(GENERATE_CONTENT_SCHEMA), toOpenApi30(COUNT_TOKENS_SCHEMA)] },
    }),
    ApiProduces('application/json', 'text/event-stream'),
    ApiOkResponse({
      description:
        'generateContent: a GenerateContentResponse; streamGenerateContent: one JSON array holding it, or with alt=sse server-sent events whose last carries the finishReason and usageMetadata; countTokens: the estimate',
      content: {
        'application/json': { schema: { oneOf: [GENERATE_CONTENT_RESPONSE, { type: 'array', items: GENERATE_CONTENT_RESPONSE }, COUNT_TOKENS_RESPONSE] } },
        'text/event-stream': { schema: { type: 'string' }, example: STREAM_EXAMPLE },
      },
    }),
    ERROR_RESPONSE,
  );
}

export function ApiGeminiModelsDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: "Every provider's models as models/provider/model, then the aliases, as the caller's allow-lists admit them" }),
    ApiOkResponse({
      description: "Google's model list, on one page",
      content: { 'application/json': { schema: { type: 'object', required: ['models'], properties: { models: { type: 'array', items: MODEL } } } } },
    }),
    ERROR_RESPONSE,
  );
}

export function ApiGeminiModelDocs(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'One model by any name the path takes; 404 NOT_FOUND when unknown or not allowed for the caller' }),
    MODEL_PATH('The model id, slashes included (e.g. openai/gpt-4o)'),
    ApiOkResponse({ description: "Google's Model resource", content: { 'application/json': { schema: MODEL } } }),
    ERROR_RESPONSE,
  );
}
