/**
 * The /v1 body's messages, tools, tool choice and response format (snake_case) in the domain's terms. Each
 * mistake is an InvalidRequestError naming the field's path, e.g. `messages[2].tool_calls[0].function.name`.
 */
import { base64ImageDataUrl } from '../../common/base64-data-url';
import { InvalidRequestError } from '../errors';
import type { ChatMessage, ContentPart, ResponseFormat, ToolCall, ToolChoice, ToolDefinition } from '../providers/ai-provider.interface';

type Json = Record<string, unknown>;

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function text(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new InvalidRequestError(`${field} must be a string`);
  return value;
}

function object(value: unknown, field: string): Json {
  if (!isJson(value)) throw new InvalidRequestError(`${field} must be an object`);
  return value;
}

export function toDomainMessages(messages: unknown[]): ChatMessage[] {
  return messages.map((value, index) => {
    const field = `messages[${index}]`;
    const message = object(value, field);
    switch (message.role) {
      case 'system':
        return { role: 'system', content: text(message.content, `${field}.content`) };
      case 'user':
        return { role: 'user', content: userContent(message.content, `${field}.content`) };
      case 'assistant': {
        const content = message.content === null || message.content === undefined ? null : text(message.content, `${field}.content`);
        if (message.tool_calls === undefined) return { role: 'assistant', content };
        if (!Array.isArray(message.tool_calls)) throw new InvalidRequestError(`${field}.tool_calls must be an array`);
        const toolCalls = message.tool_calls.map((call, callIndex) => toolCall(call, `${field}.tool_calls[${callIndex}]`));
        return { role: 'assistant', content, toolCalls };
      }
      case 'tool': {
        if (message.is_error !== undefined && typeof message.is_error !== 'boolean') {
          throw new InvalidRequestError(`${field}.is_error must be a boolean`);
        }
        return {
          role: 'tool',
          toolCallId: text(message.tool_call_id, `${field}.tool_call_id`),
          content: text(message.content, `${field}.content`),
          ...(message.is_error === true ? { isError: true } : {}),
        };
      }
      default:
        throw new InvalidRequestError(`${field}.role must be one of system, user, assistant, tool`);
    }
  });
}

function userContent(value: unknown, field: string): string | ContentPart[] {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw new InvalidRequestError(`${field} must be a string or an array of parts`);
  return value.map((item, index): ContentPart => {
    const partField = `${field}[${index}]`;
    const part = object(item, partField);
    if (part.type === 'text') return { type: 'text', text: text(part.text, `${partField}.text`) };
    if (part.type !== 'image_url') throw new InvalidRequestError(`${partField}.type must be text or image_url`);
    const image = object(part.image_url, `${partField}.image_url`);
    const detail = image.detail;
    if (detail !== undefined && detail !== 'auto' && detail !== 'low' && detail !== 'high') {
      throw new InvalidRequestError(`${partField}.image_url.detail must be auto, low or high`);
    }
    return { ...imagePart(image.url, `${partField}.image_url.url`), ...(detail !== undefined ? { detail } : {}) };
  });
}

/** An image given as an http(s) URL or a base64 `data:image/...` URL; `field` names it in the error. */
export function imagePart(value: unknown, field: string): Extract<ContentPart, { type: 'image' }> {
  const url = text(value, field);
  const data = base64ImageDataUrl(url, 2);
  if (!data && !/^https?:\/\//i.test(url)) {
    throw new InvalidRequestError(`${field} must be an http(s) URL or a base64 data: URL`);
  }
  return { type: 'image', image: data ? { kind: 'base64', ...data } : { kind: 'url', url } };
}

function toolCall(value: unknown, field: string): ToolCall {
  const call = object(value, field);
  if (call.type !== undefined && call.type !== 'function') throw new InvalidRequestError(`${field}.type must be function`);
  const fn = object(call.function, `${field}.function`);
  return { id: text(call.id, `${field}.id`), name: text(fn.name, `${field}.function.name`), arguments: text(fn.arguments ?? '', `${field}.function.arguments`) };
}

export function toDomainTools(tools: unknown[]): ToolDefinition[] {
  return tools.map((value, index) => {
    const field = `tools[${index}]`;
    const tool = object(value, field);
    if (tool.type !== 'function') throw new InvalidRequestError(`${field}.type must be function`);
    const fn = object(tool.function, `${field}.function`);
    const name = text(fn.name, `${field}.function.name`);
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) throw new InvalidRequestError(`${field}.function.name must be 1-64 letters, digits, _ or -`);
    return {
      name,
      ...(fn.description !== undefined ? { description: text(fn.description, `${field}.function.description`) } : {}),
      ...(fn.parameters !== undefined ? { parameters: object(fn.parameters, `${field}.function.parameters`) } : {}),
      ...(fn.strict !== undefined ? { strict: fn.strict === true } : {}),
    };
  });
}

export function toDomainToolChoice(value: unknown): ToolChoice {
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  if (isJson(value) && value.type === 'function' && isJson(value.function) && typeof value.function.name === 'string') {
    return { name: value.function.name };
  }
  throw new InvalidRequestError('tool_choice must be auto, none, required or {"type": "function", "function": {"name"}}');
}

export function toDomainResponseFormat(value: unknown): ResponseFormat {
  const format = object(value, 'response_format');
  if (format.type === 'text' || format.type === 'json_object') return { type: format.type };
  if (format.type !== 'json_schema') throw new InvalidRequestError('response_format.type must be text, json_object or json_schema');
  const schema = object(format.json_schema, 'response_format.json_schema');
  return {
    type: 'json_schema',
    name: text(schema.name, 'response_format.json_schema.name'),
    schema: object(schema.schema, 'response_format.json_schema.schema'),
    ...(schema.description !== undefined ? { description: text(schema.description, 'response_format.json_schema.description') } : {}),
    ...(schema.strict !== undefined ? { strict: schema.strict === true } : {}),
  };
}
