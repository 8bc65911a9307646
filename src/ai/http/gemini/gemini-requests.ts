/**
 * Request bodies of Gemini's surface (`generateContent`, `streamGenerateContent`, `countTokens`): the JSON shape
 * checked once by ajv, in Google's camelCase spelling as `@google/genai` and Gemini CLI send it. Everything the
 * domain model cannot carry is either named in a 400 or, where clients send it routinely and an answer without
 * it is still right, accepted and listed in docs/clients.md (topK, thinkingConfig, safetySettings).
 */
import Ajv, { type ErrorObject } from 'ajv';

/** A caller error on this surface: 400 INVALID_ARGUMENT whose message names the field at fault. */
export class GeminiRequestError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'GeminiRequestError';
  }
}

const OBJECT = { type: 'object' } as const;

const PART = {
  type: 'object',
  properties: {
    text: { type: 'string' },
    thought: { type: 'boolean' },
    thoughtSignature: { type: 'string' },
    inlineData: {
      type: 'object',
      required: ['mimeType', 'data'],
      properties: { mimeType: { type: 'string', minLength: 1 }, data: { type: 'string', minLength: 1 }, displayName: { type: 'string' } },
      additionalProperties: false,
    },
    fileData: {
      type: 'object',
      required: ['fileUri'],
      properties: { mimeType: { type: 'string' }, fileUri: { type: 'string', minLength: 1 }, displayName: { type: 'string' } },
      additionalProperties: false,
    },
    functionCall: {
      type: 'object',
      required: ['name'],
      properties: { id: { type: 'string' }, name: { type: 'string', minLength: 1 }, args: OBJECT },
      additionalProperties: false,
    },
    functionResponse: {
      type: 'object',
      required: ['name', 'response'],
      properties: { id: { type: 'string' }, name: { type: 'string', minLength: 1 }, response: OBJECT },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

const CONTENT = {
  type: 'object',
  required: ['parts'],
  properties: { role: { enum: ['user', 'model'] }, parts: { type: 'array', maxItems: 4096, items: PART } },
  additionalProperties: false,
} as const;

const FUNCTION_DECLARATION = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', pattern: '^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$' },
    description: { type: 'string' },
    parameters: OBJECT,
    parametersJsonSchema: OBJECT,
    response: OBJECT,
    responseJsonSchema: OBJECT,
  },
  additionalProperties: false,
} as const;

const GENERATION_CONFIG = {
  type: 'object',
  properties: {
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    topP: { type: 'number', minimum: 0, maximum: 1 },
    topK: { type: 'number', minimum: 1 },
    maxOutputTokens: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    stopSequences: { type: 'array', maxItems: 5, items: { type: 'string' } },
    candidateCount: { const: 1 },
    seed: { type: 'integer' },
    presencePenalty: { type: 'number', minimum: -2, maximum: 2 },
    frequencyPenalty: { type: 'number', minimum: -2, maximum: 2 },
    responseMimeType: { enum: ['text/plain', 'application/json'] },
    responseSchema: OBJECT,
    responseJsonSchema: OBJECT,
    responseModalities: { type: 'array', items: { const: 'TEXT' } },
    thinkingConfig: {
      type: 'object',
      properties: { includeThoughts: { type: 'boolean' }, thinkingBudget: { type: 'integer' }, thinkingLevel: { type: 'string' } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export const GENERATE_CONTENT_SCHEMA = {
  type: 'object',
  required: ['contents'],
  properties: {
    // Gemini's REST API also takes the model in the body; the path's model is the one used.
    model: { type: 'string' },
    contents: { type: 'array', minItems: 1, maxItems: 1024, items: CONTENT },
    systemInstruction: CONTENT,
    tools: {
      type: 'array',
      maxItems: 128,
      items: {
        type: 'object',
        properties: { functionDeclarations: { type: 'array', maxItems: 128, items: FUNCTION_DECLARATION } },
        additionalProperties: false,
      },
    },
    toolConfig: {
      type: 'object',
      properties: {
        functionCallingConfig: {
          type: 'object',
          properties: { mode: { enum: ['AUTO', 'ANY', 'NONE', 'MODE_UNSPECIFIED'] }, allowedFunctionNames: { type: 'array', minItems: 1, items: { type: 'string' } } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    generationConfig: GENERATION_CONFIG,
    // Google's content filters: the only provider with them is Gemini, and no answer is wrong for lacking them.
    safetySettings: { type: 'array', items: OBJECT },
  },
  additionalProperties: false,
} as const;

export const COUNT_TOKENS_SCHEMA = {
  type: 'object',
  properties: {
    contents: { type: 'array', maxItems: 1024, items: CONTENT },
    generateContentRequest: GENERATE_CONTENT_SCHEMA,
  },
  additionalProperties: false,
} as const;

export interface GeminiPartRequest {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string; displayName?: string };
  fileData?: { mimeType?: string; fileUri: string; displayName?: string };
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}

export interface GeminiContentRequest {
  role?: 'user' | 'model';
  parts: GeminiPartRequest[];
}

export interface GeminiFunctionDeclarationRequest {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  parametersJsonSchema?: Record<string, unknown>;
  response?: Record<string, unknown>;
  responseJsonSchema?: Record<string, unknown>;
}

export interface GeminiGenerationConfigRequest {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: 1;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: 'text/plain' | 'application/json';
  responseSchema?: Record<string, unknown>;
  responseJsonSchema?: Record<string, unknown>;
  responseModalities?: Array<'TEXT'>;
  thinkingConfig?: { includeThoughts?: boolean; thinkingBudget?: number; thinkingLevel?: string };
}

export interface GenerateContentRequest {
  model?: string;
  contents: GeminiContentRequest[];
  systemInstruction?: GeminiContentRequest;
  tools?: Array<{ functionDeclarations?: GeminiFunctionDeclarationRequest[] }>;
  toolConfig?: { functionCallingConfig?: { mode?: 'AUTO' | 'ANY' | 'NONE' | 'MODE_UNSPECIFIED'; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfigRequest;
  safetySettings?: Array<Record<string, unknown>>;
}

export interface CountTokensRequest {
  contents?: GeminiContentRequest[];
  generateContentRequest?: GenerateContentRequest;
}

const ajv = new Ajv({ allErrors: false, strict: true });
const validateGenerate = ajv.compile<GenerateContentRequest>(GENERATE_CONTENT_SCHEMA);
const validateCount = ajv.compile<CountTokensRequest>(COUNT_TOKENS_SCHEMA);

export function parseGenerateContentRequest(given: unknown): GenerateContentRequest {
  const body = camelCaseKeys(given);
  if (validateGenerate(body)) return body;
  throw requestError(validateGenerate.errors![0]);
}

export function parseCountTokensRequest(given: unknown): CountTokensRequest {
  const body = camelCaseKeys(given);
  if (!validateCount(body)) throw requestError(validateCount.errors![0]);
  if ((body.contents === undefined) === (body.generateContentRequest === undefined)) {
    throw new GeminiRequestError("Give exactly one of 'contents' and 'generateContentRequest'.", 'contents');
  }
  return body;
}

/** Values the caller writes freely (function arguments and results, schemas): their keys are theirs, kept as sent. */
const OPAQUE_FIELDS = new Set(['args', 'response', 'parameters', 'parametersJsonSchema', 'responseSchema', 'responseJsonSchema']);

/**
 * Google's API reads protobuf JSON, which takes each field in camelCase or in its proto name (`system_instruction`,
 * `inline_data`, `mime_type`: Google's own curl examples use both). Proto names become camelCase here, outside
 * the opaque fields; a body that has none is returned as it is, not copied.
 */
export function camelCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(camelCaseKeys);
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, field]): [string, unknown] => {
    const name = key.includes('_') ? key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase()) : key;
    const converted = OPAQUE_FIELDS.has(name) ? field : camelCaseKeys(field);
    if (name !== key || converted !== field) changed = true;
    return [name, converted];
  });
  return changed ? Object.fromEntries(entries) : value;
}

/** One ajv error in Google's words, the field as a path (`contents[0].parts[1].text`). */
function requestError(error: ErrorObject): GeminiRequestError {
  const path = fieldPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const at = path || 'body';
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      return new GeminiRequestError(`Invalid JSON payload received. Unknown name "${name}" at '${at}': Cannot find field.`, path ? `${path}.${name}` : name);
    }
    case 'required': {
      const missing = String(params.missingProperty);
      const field = path ? `${path}.${missing}` : missing;
      return new GeminiRequestError(`'${field}' is required.`, field);
    }
    case 'type':
      return new GeminiRequestError(`Invalid value at '${at}': expected ${String(params.type)}.`, at);
    case 'enum':
      return new GeminiRequestError(`Invalid value at '${at}': expected one of ${(params.allowedValues as unknown[]).join(', ')}.`, at);
    case 'const':
      return new GeminiRequestError(`Invalid value at '${at}': only ${JSON.stringify(params.allowedValue)} is supported.`, at);
    case 'minimum':
    case 'maximum':
      return new GeminiRequestError(`Invalid value at '${at}': must be ${String(params.comparison)} ${String(params.limit)}.`, at);
    case 'minItems':
    case 'maxItems':
      return new GeminiRequestError(`Invalid value at '${at}': must hold ${error.keyword === 'minItems' ? 'at least' : 'at most'} ${String(params.limit)} item(s).`, at);
    case 'minLength':
      return new GeminiRequestError(`Invalid value at '${at}': must not be empty.`, at);
    case 'pattern':
      return new GeminiRequestError(`Invalid value at '${at}': must start with a letter or an underscore and hold at most 64 letters, digits, '_', '.', ':' or '-'.`, at);
    default:
      return new GeminiRequestError(`Invalid value at '${at}'.`, at);
  }
}

/** `/contents/0/parts` -> `contents[0].parts`. */
function fieldPath(pointer: string): string {
  let path = '';
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(key) ? `[${key}]` : path ? `.${key}` : key;
  }
  return path;
}
