/**
 * Request bodies of the OpenAI-compatible surface: JSON Schemas compiled once with ajv (no per-request
 * copy of a valid body), messages that name the offending parameter the way OpenAI does, and the
 * `provider/model` reading of `model`.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { ChatMessage } from '../../providers/ai-provider.interface';

/** A caller error on this surface: 400 `invalid_request_error` with the offending parameter in `param`. */
export class OpenAiRequestError extends Error {
  constructor(
    message: string,
    readonly param: string | null,
    readonly code: string | null = null,
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
        required: ['role', 'content'],
        properties: {
          // `developer` is what newer OpenAI clients send for system instructions.
          role: { enum: ['system', 'developer', 'user', 'assistant'] },
          content: { type: ['string', 'array'], items: TEXT_PART },
          name: { type: 'string' },
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

export interface ChatCompletionRequest {
  model: string;
  messages: Array<{ role: string; content: string | Array<{ type: 'text'; text: string }>; name?: string }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[] | null;
  n?: 1;
  user?: string;
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
  return request;
}

export function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  return checked(validateEmbeddings, body);
}

/**
 * The messages as the gateway's ChatMessage list: the body's own array when every message already is one
 * (the common case, no copy), else a mapped copy (`developer` -> `system`, text parts joined).
 */
export function chatMessages(messages: ChatCompletionRequest['messages']): ChatMessage[] {
  for (const message of messages) {
    if (message.role === 'developer' || typeof message.content !== 'string') {
      return messages.map(
        (m): ChatMessage =>
          ({
            role: m.role === 'developer' ? 'system' : m.role,
            content: typeof m.content === 'string' ? m.content : m.content.map((part) => part.text).join(''),
          }) as ChatMessage,
      );
    }
  }
  return messages as ChatMessage[];
}

/** `stop` as the gateway's list (OpenAI also takes one string or null). */
export function stopSequences(stop: ChatCompletionRequest['stop']): string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  return typeof stop === 'string' ? [stop] : stop;
}

export interface ModelRef {
  /** Undefined: the default provider. */
  provider?: string;
  model: string;
}

/**
 * `anthropic/claude-x` selects provider `anthropic` when that is a registered name; anything else, slashes
 * included (`meta-llama/Llama-3`), is a model name on the default provider.
 */
export function resolveModel(model: string, providers: ReadonlySet<string>): ModelRef {
  const slash = model.indexOf('/');
  if (slash > 0 && providers.has(model.slice(0, slash))) {
    const name = model.slice(slash + 1);
    if (name === '') throw new OpenAiRequestError(`'model' names provider '${model.slice(0, slash)}' but no model after the '/'.`, 'model');
    return { provider: model.slice(0, slash), model: name };
  }
  return { model };
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
