/**
 * The `input` of a Responses request: checked item by item (naming the item and the field at fault), given
 * ids as OpenAI gives them (so `GET /responses/{id}/input_items` lists them), and turned into the domain's
 * messages. The same items, stored, are what `previous_response_id` continues from.
 */
import { randomUUID } from 'node:crypto';
import type { ChatMessage, ContentPart } from '../../providers/ai-provider.interface';
import { contentPart, OpenAiRequestError } from '../openai/openai-requests';
import { qualifiedToolName, type ResponsesInputItem } from './responses-requests';

export type MessageRole = 'user' | 'assistant' | 'system' | 'developer';

export type ItemContentPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' | 'low' | 'high' }
  | { type: 'output_text'; text: string; annotations: unknown[] }
  | { type: 'refusal'; refusal: string };

/**
 * A conversation item as the Responses API shows it, with its id; what the store keeps. A function call may
 * name the namespace its function belongs to; an output without a call is one the client adds on its own,
 * named by its namespace and name (Codex CLI's goal objective: `namespace: "agent"`, `name: "goal_objective"`).
 */
export type ResponseItem =
  | { type: 'message'; id: string; status: 'completed'; role: MessageRole; content: ItemContentPart[] }
  | { type: 'function_call'; id: string; status: 'completed'; call_id: string; name: string; namespace?: string; arguments: string }
  | { type: 'function_call_output'; id: string; status: 'completed'; call_id: string; output: string }
  | { type: 'function_call_output'; id: string; status: 'completed'; namespace: string; name: string; output: string }
  | ReasoningItem
  | WebSearchCallItem;

/**
 * A model's reasoning, kept as the caller or the upstream wrote it (its `encrypted_content` is what an OpenAI
 * upstream reads back, docs/decisions.md B19). Codex sends it without an id.
 */
export interface ReasoningItem {
  type: 'reasoning';
  id?: string;
  summary: unknown[];
  encrypted_content?: string | null;
}

/**
 * A search run for the `web_search` tool (docs/decisions.md B23), as OpenAI shows it: its status and the search
 * action (`sources` when the caller's `include` asked for them). Replayed, it is kept as given.
 */
export interface WebSearchCallItem {
  type: 'web_search_call';
  id: string;
  status: 'searching' | 'completed' | 'failed';
  action: { type: 'search'; query: string; sources?: Array<{ type: 'url'; url: string }> };
}

/** An item given by the id of a stored one (the `ai` SDK sends earlier assistant messages so); resolved from the store. */
export type ItemReference = { type: 'item_reference'; id: string };

/** OpenAI's ids: a prefix naming the kind, then 48 hex digits. */
export function itemId(prefix: 'resp' | 'msg' | 'fc' | 'fco' | 'ws'): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}

/** The request's `input` as items: a string is one user message; references are resolved by the caller. */
export function inputItems(input: string | ResponsesInputItem[]): Array<ResponseItem | ItemReference> {
  if (typeof input === 'string') return [{ type: 'message', id: itemId('msg'), status: 'completed', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return input.flatMap((item, index) => inputItem(item, `input[${index}]`));
}

/**
 * One item; a `reasoning` item is kept as given: an OpenAI upstream reads it back (docs/decisions.md B19), while the
 * domain's messages leave it out (no other kind can read another's reasoning; a model reasons afresh without it).
 */
function inputItem(item: ResponsesInputItem, at: string): Array<ResponseItem | ItemReference> {
  const type = item.type ?? 'message';
  switch (type) {
    case 'message':
      return [messageItem(item, at)];
    case 'function_call': {
      const namespace = optionalString(item, 'namespace', at);
      return [
        {
          type: 'function_call',
          id: optionalString(item, 'id', at) ?? itemId('fc'),
          status: 'completed',
          call_id: requiredString(item, 'call_id', at),
          name: requiredString(item, 'name', at),
          ...(namespace !== undefined ? { namespace } : {}),
          arguments: requiredString(item, 'arguments', at),
        },
      ];
    }
    case 'function_call_output':
      return [functionCallOutputItem(item, at)];
    case 'item_reference':
      return [{ type: 'item_reference', id: requiredString(item, 'id', at) }];
    case 'reasoning':
      if (!Array.isArray(item.summary)) throw new OpenAiRequestError(`Missing required parameter: '${at}.summary'.`, `${at}.summary`, 'missing_required_parameter');
      return [{ ...item, type: 'reasoning', summary: item.summary }];
    case 'web_search_call':
      return [{ ...item, type: 'web_search_call', id: requiredString(item, 'id', at) } as WebSearchCallItem];
    default:
      throw new OpenAiRequestError(
        `Unsupported input item type '${type}' in '${at}.type': this gateway takes message, function_call, function_call_output, item_reference, reasoning and web_search_call items.`,
        `${at}.type`,
        'unsupported_value',
      );
  }
}

/** An output answers the call its `call_id` names; one without a call_id but with a namespace answers no call. */
function functionCallOutputItem(item: ResponsesInputItem, at: string): ResponseItem {
  const id = optionalString(item, 'id', at) ?? itemId('fco');
  const output = toolOutput(item.output, `${at}.output`);
  const namespace = optionalString(item, 'namespace', at);
  if (namespace !== undefined && (item.call_id === undefined || item.call_id === null)) {
    return { type: 'function_call_output', id, status: 'completed', namespace, name: requiredString(item, 'name', at), output };
  }
  return { type: 'function_call_output', id, status: 'completed', call_id: requiredString(item, 'call_id', at), output };
}

const ROLES = new Set<MessageRole>(['user', 'assistant', 'system', 'developer']);

function messageItem(item: ResponsesInputItem, at: string): ResponseItem {
  const role = item.role as MessageRole;
  if (!ROLES.has(role)) throw new OpenAiRequestError(`Invalid value for '${at}.role': expected one of user, assistant, system, developer.`, `${at}.role`, 'invalid_value');
  const content = item.content;
  const id = optionalString(item, 'id', at) ?? itemId('msg');
  if (typeof content === 'string') {
    const part: ItemContentPart = role === 'assistant' ? { type: 'output_text', text: content, annotations: [] } : { type: 'input_text', text: content };
    return { type: 'message', id, status: 'completed', role, content: [part] };
  }
  if (!Array.isArray(content)) throw new OpenAiRequestError(`Invalid type for '${at}.content': expected a string or an array of content parts.`, `${at}.content`, 'invalid_type');
  return { type: 'message', id, status: 'completed', role, content: content.map((part, index) => contentItem(part, role, `${at}.content[${index}]`)) };
}

function contentItem(part: unknown, role: MessageRole, at: string): ItemContentPart {
  const type = (part as { type?: unknown } | null)?.type;
  const fields = part as Record<string, unknown>;
  switch (type) {
    case 'input_text':
      return { type, text: requiredString(fields, 'text', at) };
    case 'output_text':
      if (role !== 'assistant') throw new OpenAiRequestError(`Invalid value for '${at}.type': output_text parts belong to assistant messages.`, `${at}.type`, 'invalid_value');
      return { type, text: requiredString(fields, 'text', at), annotations: [] };
    case 'refusal':
      return { type, refusal: requiredString(fields, 'refusal', at) };
    case 'input_image': {
      if (role !== 'user') throw new OpenAiRequestError(`Invalid value for '${at}.type': only user messages take input_image parts.`, `${at}.type`, 'invalid_value');
      if (fields.file_id !== undefined && fields.file_id !== null) {
        throw new OpenAiRequestError(`Unsupported parameter: '${at}.file_id'; this gateway keeps no files: give 'image_url' (an http(s) or data: URL).`, `${at}.file_id`, 'unsupported_parameter');
      }
      const detail = fields.detail ?? 'auto';
      if (detail !== 'auto' && detail !== 'low' && detail !== 'high') throw new OpenAiRequestError(`Invalid value for '${at}.detail': expected one of auto, low, high.`, `${at}.detail`, 'invalid_value');
      return { type, image_url: requiredString(fields, 'image_url', at), detail };
    }
    default:
      throw new OpenAiRequestError(
        `Unsupported content part type '${String(type)}' in '${at}.type': this gateway takes input_text, input_image, output_text and refusal parts.`,
        `${at}.type`,
        'unsupported_value',
      );
  }
}

/** A tool's output: a string, or text parts joined (the domain's tool results are text). */
function toolOutput(output: unknown, at: string): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) throw new OpenAiRequestError(`Invalid type for '${at}': expected a string or an array of input_text parts.`, at, 'invalid_type');
  return output
    .map((part, index) => {
      const fields = part as Record<string, unknown>;
      if (fields?.type !== 'input_text') throw new OpenAiRequestError(`Unsupported value for '${at}[${index}].type': tool outputs are text here.`, `${at}[${index}].type`, 'unsupported_value');
      return requiredString(fields, 'text', `${at}[${index}]`);
    })
    .join('');
}

function requiredString(fields: Record<string, unknown>, name: string, at: string): string {
  const value = fields[name];
  if (value === undefined || value === null) throw new OpenAiRequestError(`Missing required parameter: '${at}.${name}'.`, `${at}.${name}`, 'missing_required_parameter');
  if (typeof value !== 'string') throw new OpenAiRequestError(`Invalid type for '${at}.${name}': expected a string.`, `${at}.${name}`, 'invalid_type');
  return value;
}

function optionalString(fields: Record<string, unknown>, name: string, at: string): string | undefined {
  return fields[name] === undefined || fields[name] === null ? undefined : requiredString(fields, name, at);
}

/**
 * The conversation as the domain's messages: `instructions` first as the system prompt, system and developer
 * messages as system ones, function calls joined to the assistant turn they follow (a namespace's function by
 * its qualified name, as the tools declared it), their outputs as tool results. An output that answers no call
 * cannot be a tool result (every provider kind pairs a result with its call), so it is what the client tells
 * the model: a system message naming where it came from. Reasoning items are left out, and so are web search calls:
 * their results were read by the model into the message that follows them.
 */
export function domainMessages(instructions: string | null | undefined, items: readonly ResponseItem[]): ChatMessage[] {
  const messages: ChatMessage[] = instructions ? [{ role: 'system', content: instructions }] : [];
  items.forEach((item, index) => {
    const at = `input[${index}]`;
    switch (item.type) {
      case 'message':
        messages.push(domainMessage(item.role, item.content, at));
        return;
      case 'function_call': {
        const name = item.namespace !== undefined ? qualifiedToolName(item.namespace, item.name) : item.name;
        const call = { id: item.call_id, name, arguments: item.arguments };
        const last = messages[messages.length - 1];
        if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
        else messages.push({ role: 'assistant', content: null, toolCalls: [call] });
        return;
      }
      case 'function_call_output':
        if ('call_id' in item) messages.push({ role: 'tool', toolCallId: item.call_id, content: item.output });
        else messages.push({ role: 'system', content: `${item.namespace}.${item.name}: ${item.output}` });
        return;
      case 'reasoning':
      case 'web_search_call':
        return;
    }
  });
  return messages;
}

function domainMessage(role: MessageRole, content: readonly ItemContentPart[], at: string): ChatMessage {
  if (role === 'user') return { role, content: content.map((part, index) => userPart(part, `${at}.content[${index}]`)) };
  const text = content.map((part) => (part.type === 'refusal' ? part.refusal : 'text' in part ? part.text : '')).join('');
  return role === 'assistant' ? { role, content: text } : { role: 'system', content: text };
}

function userPart(part: ItemContentPart, at: string): ContentPart {
  switch (part.type) {
    case 'input_image':
      return contentPart({ type: 'image_url', image_url: { url: part.image_url, detail: part.detail } }, at);
    case 'refusal':
      return { type: 'text', text: part.refusal };
    default:
      return { type: 'text', text: part.text };
  }
}
