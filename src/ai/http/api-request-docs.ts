/**
 * OpenAPI 3.0 schemas of the /v1/generate fields whose shape class-validator does not describe (messages,
 * tools, tool choice, response format): added to the DTO's generated schema with `@JSONSchema`. The checks
 * themselves are in v1-messages.ts; these say the same for the document (docs/gateway.md, REST API).
 */
import type { JSONSchema } from 'class-validator-jsonschema';

/** A schema `@JSONSchema` takes (OpenAPI 3.0's schema object). */
type SchemaObject = Exclude<Parameters<typeof JSONSchema>[0], (...args: never[]) => unknown>;

const text = { type: 'string' } as const;

const FUNCTION_CALL: SchemaObject = {
  type: 'object',
  required: ['id', 'function'],
  properties: {
    id: text,
    type: { type: 'string', enum: ['function'] },
    function: { type: 'object', required: ['name'], properties: { name: text, arguments: { type: 'string', description: 'The arguments object as JSON text' } } },
  },
};

const CONTENT_PART: SchemaObject = {
  oneOf: [
    { type: 'object', required: ['type', 'text'], properties: { type: { type: 'string', enum: ['text'] }, text } },
    {
      type: 'object',
      required: ['type', 'image_url'],
      properties: {
        type: { type: 'string', enum: ['image_url'] },
        image_url: {
          type: 'object',
          required: ['url'],
          properties: {
            url: { type: 'string', description: 'An http(s) URL or a data:image/...;base64, URL' },
            detail: { type: 'string', enum: ['auto', 'low', 'high'] },
          },
        },
      },
    },
  ],
};

const role = (name: string) => ({ type: 'string', enum: [name] }) as SchemaObject;

export const MESSAGES_DOC: SchemaObject = {
  description: 'The conversation, instead of prompt: user content a string or text and image parts; assistant tool calls; tool results.',
  items: {
    oneOf: [
      { type: 'object', required: ['role', 'content'], properties: { role: role('system'), content: text } },
      {
        type: 'object',
        required: ['role', 'content'],
        properties: { role: role('user'), content: { oneOf: [text, { type: 'array', items: CONTENT_PART }] } },
      },
      {
        type: 'object',
        required: ['role'],
        properties: { role: role('assistant'), content: { type: 'string', nullable: true }, tool_calls: { type: 'array', items: FUNCTION_CALL } },
      },
      {
        type: 'object',
        required: ['role', 'tool_call_id', 'content'],
        properties: {
          role: role('tool'),
          tool_call_id: { type: 'string', description: 'The id of the assistant tool call this result answers' },
          content: text,
          is_error: { type: 'boolean', description: 'The tool failed and content describes the failure' },
        },
      },
    ],
  },
};

export const TOOLS_DOC: SchemaObject = {
  description: 'Functions the model may call.',
  items: {
    type: 'object',
    required: ['type', 'function'],
    properties: {
      type: { type: 'string', enum: ['function'] },
      function: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
          description: text,
          parameters: { type: 'object', description: 'JSON Schema of the arguments object', additionalProperties: true },
          strict: { type: 'boolean' },
        },
      },
    },
  },
};

export const TOOL_CHOICE_DOC: SchemaObject = {
  description: 'auto (the default), none, required, or one named function.',
  oneOf: [
    { type: 'string', enum: ['auto', 'none', 'required'] },
    {
      type: 'object',
      required: ['type', 'function'],
      properties: { type: { type: 'string', enum: ['function'] }, function: { type: 'object', required: ['name'], properties: { name: text } } },
    },
  ],
};

export const RESPONSE_FORMAT_DOC: SchemaObject = {
  description: 'Plain text (the default), any JSON object, or JSON matching a schema.',
  oneOf: [
    { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: ['text', 'json_object'] } } },
    {
      type: 'object',
      required: ['type', 'json_schema'],
      properties: {
        type: { type: 'string', enum: ['json_schema'] },
        json_schema: {
          type: 'object',
          required: ['name', 'schema'],
          properties: { name: text, schema: { type: 'object', additionalProperties: true }, description: text, strict: { type: 'boolean' } },
        },
      },
    },
  ],
};

export const ENABLE_FALLBACK_DOC: SchemaObject = {
  description: 'Whether another provider may answer when this one fails (default: ai.enable_fallback); fallback is its alias.',
};

export const FALLBACK_ALIAS_DOC: SchemaObject = {
  description: 'Alias of enable_fallback; both given with different values is a 400.',
};
