/**
 * Request bodies of the OpenAI-compatible surface: JSON Schemas compiled once with ajv (no per-request
 * copy of a valid body) and messages that name the offending parameter the way OpenAI does.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { base64ImageDataUrl } from '../../../common/base64-data-url';
import type { ChatMessage, ContentPart, ResponseFormat, ToolChoice, ToolDefinition } from '../../providers/ai-provider.interface';

/**
 * A caller error on this surface: `invalid_request_error` with the offending parameter in `param`; 400, or 404
 * for something named that does not exist (a stored response).
 */
export class OpenAiRequestError extends Error {
  constructor(
    message: string,
    readonly param: string | null,
    readonly code: string | null = null,
    readonly status: 400 | 404 = 400,
  ) {
    super(message);
    this.name = 'OpenAiRequestError';
  }
}

const MODEL = { type: 'string', minLength: 1, maxLength: 256 } as const;

/** The part's type is checked first, so an image part is refused for being one, not for lacking `text`. */
const TEXT_PART = {
  type: 'object',
  allOf: [{ required: ['type'], properties: { type: { const: 'text' } } }],
  required: ['text'],
  properties: { type: true, text: { type: 'string' } },
  additionalProperties: false,
} as const;

const IMAGE_PART = {
  type: 'object',
  allOf: [{ required: ['type'], properties: { type: { const: 'image_url' } } }],
  required: ['image_url'],
  properties: {
    type: true,
    image_url: {
      type: 'object',
      required: ['url'],
      properties: { url: { type: 'string', minLength: 1 }, detail: { enum: ['auto', 'low', 'high'] } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

const TOOL_CALL = {
  type: 'object',
  required: ['id', 'type', 'function'],
  properties: {
    id: { type: 'string', minLength: 1 },
    type: { const: 'function' },
    function: {
      type: 'object',
      required: ['name', 'arguments'],
      properties: { name: { type: 'string', minLength: 1 }, arguments: { type: 'string' } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

const TOOL = {
  type: 'object',
  required: ['type', 'function'],
  properties: {
    type: { const: 'function' },
    function: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
        description: { type: 'string' },
        parameters: { type: 'object' },
        strict: { type: ['boolean', 'null'] },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

const RESPONSE_FORMAT = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['text', 'json_object', 'json_schema'] },
    json_schema: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
        description: { type: 'string' },
        schema: { type: 'object' },
        strict: { type: ['boolean', 'null'] },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export const CHAT_SCHEMA = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: MODEL,
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: 1024,
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          // `developer` is what newer OpenAI clients send for system instructions.
          role: { enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
          // Which roles take image parts, null or tool_calls is checked in chatMessages, naming the message.
          content: { type: ['string', 'array', 'null'], items: { type: 'object', oneOf: [TEXT_PART, IMAGE_PART] } },
          name: { type: 'string' },
          tool_calls: { type: 'array', minItems: 1, maxItems: 128, items: TOOL_CALL },
          tool_call_id: { type: 'string', minLength: 1 },
          refusal: { type: ['string', 'null'] },
        },
        additionalProperties: false,
      },
    },
    stream: { type: 'boolean' },
    stream_options: {
      type: ['object', 'null'],
      properties: { include_usage: { type: 'boolean' } },
      additionalProperties: false,
    },
    max_tokens: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    max_completion_tokens: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    stop: { type: ['string', 'array', 'null'], items: { type: 'string' }, maxItems: 4 },
    n: { const: 1 },
    user: { type: 'string' },
    tools: { type: 'array', maxItems: 128, items: TOOL },
    tool_choice: {
      oneOf: [
        { enum: ['auto', 'none', 'required'] },
        {
          type: 'object',
          required: ['type', 'function'],
          properties: {
            type: { const: 'function' },
            function: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } }, additionalProperties: false },
          },
          additionalProperties: false,
        },
      ],
    },
    parallel_tool_calls: { type: 'boolean' },
    response_format: RESPONSE_FORMAT,
    seed: { type: 'integer' },
    frequency_penalty: { type: 'number', minimum: -2, maximum: 2 },
    presence_penalty: { type: 'number', minimum: -2, maximum: 2 },
    logprobs: { type: ['boolean', 'null'] },
  },
  additionalProperties: false,
} as const;

export const EMBEDDINGS_SCHEMA = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: MODEL,
    input: { type: ['string', 'array'], minItems: 1, items: { type: 'string', minLength: 1 }, minLength: 1 },
    encoding_format: { enum: ['float', 'base64'] },
    user: { type: 'string' },
  },
  additionalProperties: false,
} as const;

export type RequestPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

interface RequestToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatCompletionRequest {
  model: string;
  messages: Array<{
    role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
    content?: string | RequestPart[] | null;
    name?: string;
    tool_calls?: RequestToolCall[];
    tool_call_id?: string;
    refusal?: string | null;
  }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[] | null;
  n?: 1;
  user?: string;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null } }>;
  tool_choice?: 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };
  parallel_tool_calls?: boolean;
  response_format?: {
    type: 'text' | 'json_object' | 'json_schema';
    json_schema?: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null };
  };
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  logprobs?: boolean | null;
}

export interface EmbeddingsRequest {
  model: string;
  input: string | string[];
  encoding_format?: 'float' | 'base64';
  user?: string;
}

// strictTypes off: `type: [string, array]` with `items` is the intended "string or list of strings".
const ajv = new Ajv({ allErrors: false, strict: true, strictTypes: false });
const validateChat = ajv.compile<ChatCompletionRequest>(CHAT_SCHEMA);
const validateEmbeddings = ajv.compile<EmbeddingsRequest>(EMBEDDINGS_SCHEMA);

export function parseChatRequest(body: unknown): ChatCompletionRequest {
  const request = checked(validateChat, body);
  if (request.max_tokens !== undefined && request.max_completion_tokens !== undefined) {
    throw new OpenAiRequestError("Give either 'max_tokens' or 'max_completion_tokens', not both.", 'max_completion_tokens');
  }
  // Token log probabilities are not carried through the gateway: only the default is accepted.
  if (request.logprobs === true) {
    throw new OpenAiRequestError("Unsupported value: 'logprobs' true is not supported by this gateway; only false is accepted.", 'logprobs', 'unsupported_value');
  }
  return request;
}

export function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  return checked(validateEmbeddings, body);
}

/** The messages as the gateway's ChatMessage list: `developer` -> `system`, image_url parts as images. */
export function chatMessages(messages: ChatCompletionRequest['messages']): ChatMessage[] {
  return messages.map((message, index): ChatMessage => {
    const at = `messages[${index}]`;
    const content = message.content;
    const textOnly = (): string => {
      if (typeof content === 'string') return content;
      if (content === undefined || content === null) throw new OpenAiRequestError(`Missing required parameter: '${at}.content'.`, `${at}.content`, 'missing_required_parameter');
      return content
        .map((part) => {
          if (part.type !== 'text') throw new OpenAiRequestError(`Invalid value for '${at}.content': only user messages take image_url parts.`, `${at}.content`, 'invalid_value');
          return part.text;
        })
        .join('');
    };
    if (message.tool_calls !== undefined && message.role !== 'assistant') {
      throw new OpenAiRequestError(`Invalid parameter: '${at}.tool_calls' is only allowed on assistant messages.`, `${at}.tool_calls`, 'invalid_value');
    }
    if (message.tool_call_id !== undefined && message.role !== 'tool') {
      throw new OpenAiRequestError(`Invalid parameter: '${at}.tool_call_id' is only allowed on tool messages.`, `${at}.tool_call_id`, 'invalid_value');
    }
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: textOnly() };
      case 'user':
        return { role: 'user', content: typeof content === 'string' || content === undefined || content === null ? textOnly() : content.map((part) => contentPart(part, at)) };
      case 'assistant': {
        const toolCalls = message.tool_calls?.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
        if (toolCalls && (content === undefined || content === null)) return { role: 'assistant', content: null, toolCalls };
        return { role: 'assistant', content: textOnly(), ...(toolCalls ? { toolCalls } : {}) };
      }
      case 'tool':
        if (message.tool_call_id === undefined) {
          throw new OpenAiRequestError(`Missing required parameter: '${at}.tool_call_id'.`, `${at}.tool_call_id`, 'missing_required_parameter');
        }
        return { role: 'tool', toolCallId: message.tool_call_id, content: textOnly() };
    }
  });
}

/** One content part as the domain's: an image_url must be an http(s) URL or a base64 data: URL. */
export function contentPart(part: RequestPart, at: string): ContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const { url, detail } = part.image_url;
  const data = base64ImageDataUrl(url);
  if (data) return { type: 'image', image: { kind: 'base64', ...data }, ...(detail ? { detail } : {}) };
  if (!/^https?:\/\//i.test(url)) {
    throw new OpenAiRequestError(`Invalid value for '${at}.content': an image_url must be an http(s) URL or a base64 data: URL.`, `${at}.content`, 'invalid_image_url');
  }
  return { type: 'image', image: { kind: 'url', url }, ...(detail ? { detail } : {}) };
}

export function toolDefinitions(tools: ChatCompletionRequest['tools']): ToolDefinition[] | undefined {
  return tools?.map(({ function: fn }) => ({
    name: fn.name,
    ...(fn.description !== undefined ? { description: fn.description } : {}),
    ...(fn.parameters !== undefined ? { parameters: fn.parameters } : {}),
    ...(typeof fn.strict === 'boolean' ? { strict: fn.strict } : {}),
  }));
}

export function toolChoice(choice: ChatCompletionRequest['tool_choice']): ToolChoice | undefined {
  if (choice === undefined || typeof choice === 'string') return choice;
  return { name: choice.function.name };
}

export function responseFormat(format: ChatCompletionRequest['response_format']): ResponseFormat | undefined {
  if (format === undefined) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  const spec = format.json_schema;
  if (!spec) throw new OpenAiRequestError("Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema', 'missing_required_parameter');
  return {
    type: 'json_schema',
    name: spec.name,
    schema: spec.schema ?? {},
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    ...(typeof spec.strict === 'boolean' ? { strict: spec.strict } : {}),
  };
}

/** `stop` as the gateway's list (OpenAI also takes one string or null). */
export function stopSequences(stop: ChatCompletionRequest['stop']): string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  return typeof stop === 'string' ? [stop] : stop;
}

function checked<T>(validate: ValidateFunction<T>, body: unknown): T {
  if (validate(body)) return body;
  throw requestError(validate.errors![0]);
}

/** One ajv error as OpenAI words it: the parameter path in `param` and in the message. */
export function requestError(error: ErrorObject): OpenAiRequestError {
  const path = paramPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const extra = String(params.additionalProperty);
      const param = path ? `${path}.${extra}` : extra;
      return new OpenAiRequestError(`Unrecognized request argument supplied: ${param}`, param, 'unknown_parameter');
    }
    case 'required': {
      const missing = String(params.missingProperty);
      const param = path ? `${path}.${missing}` : missing;
      return new OpenAiRequestError(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
    }
    case 'type': {
      const expected = String(params.type).replace(/,/g, ' or ');
      return new OpenAiRequestError(`Invalid type for '${path || 'body'}': expected ${expected}.`, path || null, 'invalid_type');
    }
    case 'enum':
      return new OpenAiRequestError(
        `Invalid value for '${path}': expected one of ${(params.allowedValues as unknown[]).join(', ')}.`,
        path,
        'invalid_value',
      );
    case 'const':
      return new OpenAiRequestError(`Invalid value for '${path}': only ${JSON.stringify(params.allowedValue)} is supported.`, path, 'invalid_value');
    case 'minimum':
    case 'maximum':
      return new OpenAiRequestError(`Invalid value for '${path}': must be ${params.comparison} ${params.limit}.`, path, 'invalid_value');
    case 'minItems':
      return new OpenAiRequestError(`Invalid value for '${path}': must hold at least ${params.limit} item(s).`, path, 'invalid_value');
    case 'maxItems':
      return new OpenAiRequestError(`Invalid value for '${path}': must hold at most ${params.limit} items.`, path, 'invalid_value');
    case 'minLength':
      return new OpenAiRequestError(`Invalid value for '${path}': must not be empty.`, path, 'invalid_value');
    case 'maxLength':
      return new OpenAiRequestError(`Invalid value for '${path}': must be at most ${params.limit} characters.`, path, 'invalid_value');
    default:
      return new OpenAiRequestError(`Invalid value for '${path || 'body'}'.`, path || null, 'invalid_value');
  }
}

/** `/messages/0/role` -> `messages[0].role`. */
function paramPath(pointer: string): string {
  let path = '';
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(key) ? `[${key}]` : path ? `.${key}` : key;
  }
  return path;
}
