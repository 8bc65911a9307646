/**
 * Request bodies of the Anthropic Messages surface, as Anthropic documents them, mapped into the gateway's one
 * domain request (ChatMessage list and GenerateOptions), so every provider kind can answer them. The top level
 * is checked by a JSON Schema compiled once; content blocks are checked while they are mapped, so an error
 * names the block (`messages.2.content.0.source`) the way Anthropic words its own 400s.
 *
 * What Claude Code sends routinely is accepted even where the domain has no counterpart (docs/clients.md says
 * what happens to each): `cache_control` anywhere, `thinking` / `redacted_thinking` blocks in the history,
 * the `thinking` setting, `context_management`, `output_config.effort`, `metadata`, `service_tier` and the tool
 * fields `defer_loading`, `strict`, `input_examples`, `eager_input_streaming`; an Anthropic upstream gets them
 * all as sent (nativeRequest). What only Anthropic can answer (server tools, `mcp_servers`, documents that are
 * not text or ask for citations, and the server tools' blocks in the history) is left out of the domain request
 * and named in `nativeOnly`: the call then goes to an Anthropic model only (Claude on Anthropic or on Vertex), and any
 * other target refuses it naming the field (docs/decisions.md B16); what Vertex lacks of them is named in
 * `firstPartyOnly` too (B24). `top_k` is refused by targets without top-k.
 */
import Ajv, { type ErrorObject } from 'ajv';
import type { CacheHint, ChatMessage, ContentPart, ImageSource, NativeRequest, ResponseFormat, ToolChoice, ToolDefinition } from '../../providers/ai-provider.interface';
import type { GenerationParameters } from '../../client/ai-client';

/** A caller error on this surface: 400 `invalid_request_error`, its message naming the field. */
export class AnthropicRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnthropicRequestError';
  }
}

const CACHE_CONTROL = { type: ['object', 'null'] } as const;

/** A content block: its `type` here, its other fields checked by the mapping. */
const BLOCK = { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } as const;

const CUSTOM_TOOL = {
  type: 'object',
  required: ['name'],
  properties: {
    type: { type: 'string' },
    name: { type: 'string', minLength: 1, maxLength: 128 },
    description: { type: 'string' },
    input_schema: { type: 'object' },
    cache_control: CACHE_CONTROL,
    defer_loading: { type: 'boolean' },
    strict: { type: 'boolean' },
    input_examples: { type: 'array' },
    eager_input_streaming: { type: ['boolean', 'null'] },
  },
  additionalProperties: false,
} as const;

/**
 * A custom tool (no `type`, or `custom`) is checked field by field; a server tool (`web_search_20250305`,
 * `bash_20250124`, `mcp_toolset`, ...) has fields of its own per type, which only Anthropic checks.
 */
const TOOL = {
  if: { type: 'object', required: ['type'], properties: { type: { not: { const: 'custom' } } } },
  then: { type: 'object', properties: { type: { type: 'string', minLength: 1 }, name: { type: 'string' } } },
  else: CUSTOM_TOOL,
} as const;

const TOOL_CHOICE = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['auto', 'any', 'tool', 'none'] },
    name: { type: 'string', minLength: 1 },
    disable_parallel_tool_use: { type: 'boolean' },
  },
  additionalProperties: false,
} as const;

/** Structured output's format; null is the same as leaving it out. */
const JSON_SCHEMA_FORMAT = {
  type: ['object', 'null'],
  required: ['type', 'schema'],
  properties: { type: { const: 'json_schema' }, schema: { type: 'object' } },
  additionalProperties: false,
} as const;

export const MESSAGES_SCHEMA = {
  type: 'object',
  required: ['model', 'messages', 'max_tokens'],
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 256 },
    messages: {
      type: 'array',
      maxItems: 100_000,
      items: {
        type: 'object',
        required: ['role', 'content'],
        properties: { role: { enum: ['user', 'assistant', 'system'] }, content: { type: ['string', 'array'], items: BLOCK } },
        additionalProperties: false,
      },
    },
    system: { type: ['string', 'array'], items: BLOCK },
    max_tokens: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    metadata: { type: 'object', properties: { user_id: { type: ['string', 'null'] } }, additionalProperties: false },
    stop_sequences: { type: 'array', items: { type: 'string' } },
    stream: { type: 'boolean' },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer', minimum: 0 },
    tools: { type: 'array', maxItems: 1024, items: TOOL },
    tool_choice: TOOL_CHOICE,
    thinking: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['enabled', 'disabled', 'adaptive'] },
        budget_tokens: { type: 'integer', minimum: 0 },
        // How thinking comes back (`summarized`, `omitted`, ...): Anthropic's to check, as for `effort`.
        display: { type: 'string', minLength: 1 },
      },
      additionalProperties: false,
    },
    output_config: {
      type: 'object',
      properties: { effort: { type: ['string', 'null'] }, format: JSON_SCHEMA_FORMAT },
      additionalProperties: false,
    },
    output_format: JSON_SCHEMA_FORMAT,
    context_management: { type: ['object', 'null'] },
    service_tier: { enum: ['auto', 'standard_only'] },
    mcp_servers: { type: 'array', items: { type: 'object' } },
  },
  additionalProperties: false,
} as const;

/** One content block as the schema lets it through; its fields are checked by the mapping. */
type Block = { type: string } & Record<string, unknown>;

export interface MessagesRequest {
  model: string;
  messages: Array<{ role: 'user' | 'assistant' | 'system'; content: string | Block[] }>;
  system?: string | Block[];
  max_tokens: number;
  metadata?: { user_id?: string | null };
  stop_sequences?: string[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: Array<{ type?: string; name: string; description?: string; input_schema?: Record<string, unknown>; cache_control?: unknown }>;
  tool_choice?: { type: 'auto' | 'any' | 'tool' | 'none'; name?: string; disable_parallel_tool_use?: boolean };
  thinking?: { type: 'enabled' | 'disabled' | 'adaptive'; budget_tokens?: number; display?: string };
  output_config?: { effort?: string | null; format?: { type: 'json_schema'; schema: Record<string, unknown> } | null };
  output_format?: { type: 'json_schema'; schema: Record<string, unknown> } | null;
  context_management?: Record<string, unknown> | null;
  service_tier?: 'auto' | 'standard_only';
  mcp_servers?: Array<Record<string, unknown>>;
}

/** `count_tokens` takes the same body without `max_tokens` and the sampling settings. */
export const COUNT_TOKENS_SCHEMA = {
  ...MESSAGES_SCHEMA,
  required: ['model', 'messages'],
  properties: {
    model: MESSAGES_SCHEMA.properties.model,
    messages: MESSAGES_SCHEMA.properties.messages,
    system: MESSAGES_SCHEMA.properties.system,
    tools: MESSAGES_SCHEMA.properties.tools,
    tool_choice: MESSAGES_SCHEMA.properties.tool_choice,
    thinking: MESSAGES_SCHEMA.properties.thinking,
    output_config: MESSAGES_SCHEMA.properties.output_config,
    output_format: MESSAGES_SCHEMA.properties.output_format,
    context_management: MESSAGES_SCHEMA.properties.context_management,
    mcp_servers: MESSAGES_SCHEMA.properties.mcp_servers,
  },
} as const;

export type CountTokensRequest = Omit<MessagesRequest, 'max_tokens'>;

// strictTypes off: `type: [string, array]` with `items` is the intended "string or list of blocks".
const ajv = new Ajv({ allErrors: false, strict: true, strictTypes: false });
const validateMessages = ajv.compile<MessagesRequest>(MESSAGES_SCHEMA);
const validateCountTokens = ajv.compile<CountTokensRequest>(COUNT_TOKENS_SCHEMA);

export function parseMessagesRequest(body: unknown): MessagesRequest {
  if (validateMessages(body)) return body;
  throw requestError(validateMessages.errors![0]);
}

export function parseCountTokensRequest(body: unknown): CountTokensRequest {
  if (validateCountTokens(body)) return body;
  throw requestError(validateCountTokens.errors![0]);
}

/**
 * The request as an Anthropic upstream takes it (docs/decisions.md B16): the body as the caller wrote it, and the
 * caller's `anthropic-version` and `anthropic-beta` headers. `role: "system"` messages are moved into `system`
 * (the API refuses that role in `messages`; the domain path moves them the same way) unless the caller enabled
 * the beta that takes them where they stand (Claude Code sends `mid-conversation-system-…`).
 */
export function nativeRequest(
  request: CountTokensRequest,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  anthropicOnly: readonly string[] = [],
): NativeRequest {
  const forwarded: Record<string, string> = {};
  for (const name of ['anthropic-version', 'anthropic-beta']) {
    const value = headers[name];
    if (value !== undefined) forwarded[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const systemInPlace = forwarded['anthropic-beta']?.includes(MID_CONVERSATION_SYSTEM_BETA) === true;
  const least = request.thinking?.type === 'enabled' ? THINKING_LEAST_MAX_TOKENS : undefined;
  return {
    dialect: 'anthropic-messages',
    body: { ...(systemInPlace ? request : withSystemMessagesMoved(request)) },
    headers: forwarded,
    ...(anthropicOnly.length > 0 ? { nativeOnly: anthropicOnly[0] } : {}),
    ...(anthropicOnly.length > 0 ? ownApiField(request) : {}),
    ...(least !== undefined ? { leastMaxTokens: least } : {}),
  };
}

/** Server tools only Anthropic's own API runs: Claude on Vertex has web search, bash, text editor, memory and tool search, not these. */
const OWN_API_TOOL = /^(web_fetch|code_execution|mcp_toolset)(_|$)/;
/** Those tools' results, and the MCP connector's blocks, in an earlier answer. */
const OWN_API_BLOCK = /^(mcp_tool_use|mcp_tool_result|web_fetch_tool_result|[a-z_]*code_execution_tool_result|container_upload)$/;

/**
 * The first field only Anthropic's own API takes (docs/decisions.md B24): the MCP connector, a Files API document,
 * web fetch and code execution and their results. Claude on Vertex speaks the rest of the body.
 */
function ownApiField(request: CountTokensRequest): Pick<NativeRequest, 'firstPartyOnly'> {
  if (request.mcp_servers?.length) return { firstPartyOnly: 'mcp_servers' };
  const tool = request.tools?.findIndex((entry) => typeof entry.type === 'string' && OWN_API_TOOL.test(entry.type)) ?? -1;
  if (tool >= 0) return { firstPartyOnly: `tools.${tool}.type: server tool '${request.tools![tool].type}'` };
  for (const [index, message] of request.messages.entries()) {
    if (typeof message.content === 'string') continue;
    for (const [blockIndex, block] of message.content.entries()) {
      const at = `messages.${index}.content.${blockIndex}`;
      if (OWN_API_BLOCK.test(block.type)) return { firstPartyOnly: `${at}.type: '${block.type}'` };
      if (block.type === 'document' && (block.source as { type?: unknown } | undefined)?.type === 'file') return { firstPartyOnly: `${at}.source.type: 'file' document` };
    }
  }
  return {};
}

/** The API's least `thinking.budget_tokens`; `max_tokens` must be above it. */
export const THINKING_LEAST_BUDGET = 1024;
const THINKING_LEAST_MAX_TOKENS = THINKING_LEAST_BUDGET + 1;

/** The prefix of the beta under which the API takes `role: "system"` messages in the list. */
const MID_CONVERSATION_SYSTEM_BETA = 'mid-conversation-system-';

function withSystemMessagesMoved(request: CountTokensRequest): CountTokensRequest {
  if (!request.messages.some((message) => message.role === 'system')) return request;
  const system: Block[] = typeof request.system === 'string' ? [{ type: 'text', text: request.system }] : [...(request.system ?? [])];
  const messages: MessagesRequest['messages'] = [];
  for (const message of request.messages) {
    if (message.role !== 'system') messages.push(message);
    else if (typeof message.content === 'string') system.push({ type: 'text', text: message.content });
    else system.push(...message.content);
  }
  return { ...request, system, messages };
}

/**
 * The generation settings of a request, as GenerateOptions names them. `anthropicOnly` collects the fields only an
 * Anthropic upstream takes, left out here (server tools, `mcp_servers`).
 */
export function generationParameters(request: MessagesRequest, anthropicOnly: string[] = []): GenerationParameters {
  const format = request.output_config?.format ?? request.output_format;
  if (request.mcp_servers?.length) anthropicOnly.push('mcp_servers');
  return {
    maxTokens: request.max_tokens,
    temperature: request.temperature,
    topP: request.top_p,
    topK: request.top_k,
    stop: request.stop_sequences?.length ? request.stop_sequences : undefined,
    tools: toolDefinitions(request.tools, anthropicOnly),
    toolChoice: toolChoice(request.tool_choice),
    parallelToolCalls: request.tool_choice?.disable_parallel_tool_use === true ? false : undefined,
    responseFormat: format ? jsonSchemaFormat(format.schema) : undefined,
  };
}

function jsonSchemaFormat(schema: Record<string, unknown>): ResponseFormat {
  return { type: 'json_schema', name: 'output', schema };
}

/** Custom tools; a server tool (`web_search_...`, `bash_...`) runs at Anthropic, so it is only named in `anthropicOnly`. */
export function toolDefinitions(tools: MessagesRequest['tools'], anthropicOnly: string[] = []): ToolDefinition[] | undefined {
  if (tools === undefined || tools.length === 0) return undefined;
  const definitions: ToolDefinition[] = [];
  tools.forEach((tool, index) => {
    if (tool.type !== undefined && tool.type !== 'custom') {
      anthropicOnly.push(`tools.${index}.type: server tool '${tool.type}'`);
      return;
    }
    if (tool.input_schema === undefined) throw new AnthropicRequestError(`tools.${index}.input_schema: Field required`);
    const cache = controlHint(tool.cache_control, `tools.${index}.cache_control`);
    definitions.push({ name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), parameters: tool.input_schema, ...(cache ? { cache } : {}) });
  });
  return definitions.length > 0 ? definitions : undefined;
}

export function toolChoice(choice: MessagesRequest['tool_choice']): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  switch (choice.type) {
    case 'any':
      return 'required';
    case 'tool':
      if (choice.name === undefined) throw new AnthropicRequestError('tool_choice.name: Field required');
      return { name: choice.name };
    default:
      return choice.type;
  }
}

/**
 * The system prompt and the turns as domain messages. `system` comes first; a `role: "system"` message stays
 * a system instruction where it stands (Claude Code sends one after the prompt), never a user turn. Blocks only
 * Anthropic reads are named in `anthropicOnly` and left out (a document stands as a line saying so, so a turn of
 * one PDF is still a turn).
 */
export function domainMessages(request: Pick<MessagesRequest, 'system' | 'messages'>, anthropicOnly: string[] = []): ChatMessage[] {
  const out: ChatMessage[] = [];
  const system = request.system === undefined ? '' : systemText(request.system, 'system');
  if (system !== '') out.push(withCache({ role: 'system', content: system }, request.system, 'system'));
  request.messages.forEach((message, index) => {
    const at = `messages.${index}.content`;
    if (message.role === 'system') out.push(withCache({ role: 'system', content: systemText(message.content, at) }, message.content, at));
    else if (message.role === 'user') out.push(...userTurn(message.content, at, anthropicOnly));
    else out.push(withCache(assistantTurn(message.content, at, anthropicOnly), message.content, at));
  });
  return out;
}

/**
 * The cache hint of blocks that end in one domain message or tool: a breakpoint at its end when any of them
 * carries `cache_control`, at the ttl of the last that does (the domain marks ends, not blocks: a breakpoint
 * inside a message caches that whole message).
 */
function cacheHint(blocks: readonly Block[], at: string, skip?: (block: Block) => boolean): CacheHint | undefined {
  let hint: CacheHint | undefined;
  blocks.forEach((block, index) => {
    if (!skip?.(block)) hint = controlHint(block.cache_control, `${at}.${index}.cache_control`) ?? hint;
  });
  return hint;
}

function controlHint(value: unknown, at: string): CacheHint | undefined {
  if (value === undefined || value === null) return undefined;
  const control = value as Record<string, unknown>;
  if (control.type !== 'ephemeral') throw new AnthropicRequestError(`${at}.type: expected 'ephemeral'`);
  if (control.ttl === undefined) return {};
  if (control.ttl !== '5m' && control.ttl !== '1h') throw new AnthropicRequestError(`${at}.ttl: expected '5m' or '1h'`);
  return { ttl: control.ttl };
}

function withCache<M extends ChatMessage>(message: M, content: string | Block[] | undefined, at: string, skip?: (block: Block) => boolean): M {
  const cache = content === undefined || typeof content === 'string' ? undefined : cacheHint(content, at, skip);
  return cache ? { ...message, cache } : message;
}

function systemText(content: string | Block[], at: string): string {
  if (typeof content === 'string') return content;
  return content.map((block, index) => textOf(block, `${at}.${index}`)).join('\n\n');
}

function textOf(block: Block, at: string): string {
  if (block.type !== 'text') throw new AnthropicRequestError(`${at}.type: expected 'text', got '${block.type}'`);
  return stringField(block, 'text', at);
}

/**
 * A user turn: its `tool_result` blocks become tool messages (Anthropic puts them first in the turn, the
 * domain as messages of their own), the rest one user message of text and image parts (images from tool
 * results first).
 */
function userTurn(content: string | Block[], at: string, anthropicOnly: string[]): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const results: ChatMessage[] = [];
  const resultImages: ContentPart[] = [];
  const parts: ContentPart[] = [];
  content.forEach((block, index) => {
    const here = `${at}.${index}`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: stringField(block, 'text', here) });
        break;
      case 'image':
        parts.push({ type: 'image', image: imageSource(block.source, `${here}.source`) });
        break;
      case 'document':
        parts.push(documentPart(block, here, anthropicOnly));
        break;
      case 'tool_result':
        results.push(toolResult(block, here, resultImages));
        break;
      default:
        throw new AnthropicRequestError(`${here}.type: '${block.type}' is not supported in a user turn by this gateway`);
    }
  });
  parts.unshift(...resultImages);
  if (parts.length === 0) return results;
  const user: ChatMessage = { role: 'user', content: parts.every((part) => part.type === 'text') ? parts.map((part) => (part as { text: string }).text).join('\n\n') : parts };
  return [...results, withCache(user, content, at, (block) => block.type === 'tool_result')];
}

/**
 * An assistant turn: text and `tool_use` blocks. Earlier `thinking` / `redacted_thinking` blocks are the
 * model's own past reasoning; the domain has no place for them, so they are left out of the history sent to
 * other kinds (an Anthropic upstream gets them, signatures intact, in the native body).
 */
function assistantTurn(content: string | Block[], at: string, anthropicOnly: string[]): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const toolCalls: Array<{ id: string; name: string; arguments: string }> = [];
  content.forEach((block, index) => {
    const here = `${at}.${index}`;
    switch (block.type) {
      case 'text':
        texts.push(stringField(block, 'text', here));
        break;
      case 'tool_use':
        toolCalls.push({ id: stringField(block, 'id', here), name: stringField(block, 'name', here), arguments: JSON.stringify(block.input ?? {}) });
        break;
      case 'thinking':
      case 'redacted_thinking':
        break;
      default:
        if (!SERVER_TOOL_BLOCK.test(block.type)) throw new AnthropicRequestError(`${here}.type: '${block.type}' is not supported in an assistant turn by this gateway`);
        anthropicOnly.push(`${here}.type: '${block.type}'`);
    }
  });
  const text = texts.join('');
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text === '' ? null : text, toolCalls };
}

/** A server tool's call or result in an earlier answer (`server_tool_use`, `web_search_tool_result`, `mcp_tool_use`, ...). */
const SERVER_TOOL_BLOCK = /^(server_tool_use|mcp_tool_use|[a-z_]+_tool_result)$/;

/**
 * A tool's result: its text (a string or text blocks) and `is_error`. Domain tool results are text only, so
 * images a tool returned (Claude Code's Read on a screenshot) go into the user message of the same turn, after
 * the results, and the result's text says so; the model sees them either way.
 */
function toolResult(block: Block, at: string, images: ContentPart[]): ChatMessage {
  const id = stringField(block, 'tool_use_id', at);
  const content = block.content;
  let text: string;
  if (content === undefined) text = '';
  else if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    const texts: string[] = [];
    let imageCount = 0;
    (content as Block[]).forEach((part, index) => {
      const here = `${at}.content.${index}`;
      if (part?.type === 'text') texts.push(stringField(part, 'text', here));
      else if (part?.type === 'image') {
        images.push({ type: 'image', image: imageSource(part.source, `${here}.source`) });
        imageCount += 1;
      } else throw new AnthropicRequestError(`${here}.type: only text and image are supported inside a tool_result by this gateway`);
    });
    if (imageCount > 0) texts.push(`[${imageCount} image(s) of this result follow in the next user message]`);
    text = texts.join('\n');
  } else throw new AnthropicRequestError(`${at}.content: Input should be a valid string or list`);
  const cache = controlHint(block.cache_control, `${at}.cache_control`);
  return { role: 'tool', toolCallId: id, content: text, ...(block.is_error === true ? { isError: true } : {}), ...(cache ? { cache } : {}) };
}

const MEDIA_TYPE = /^image\/[a-z0-9.+-]+$/i;

function imageSource(source: unknown, at: string): ImageSource {
  const value = (source ?? {}) as Record<string, unknown>;
  if (value.type === 'base64') {
    if (typeof value.media_type !== 'string' || !MEDIA_TYPE.test(value.media_type)) throw new AnthropicRequestError(`${at}.media_type: an image media type is required`);
    if (typeof value.data !== 'string' || value.data === '') throw new AnthropicRequestError(`${at}.data: Field required`);
    return { kind: 'base64', mediaType: value.media_type.toLowerCase(), data: value.data };
  }
  if (value.type === 'url') {
    if (typeof value.url !== 'string' || !/^https?:\/\//i.test(value.url)) throw new AnthropicRequestError(`${at}.url: an http(s) URL is required`);
    return { kind: 'url', url: value.url };
  }
  throw new AnthropicRequestError(`${at}.type: expected 'base64' or 'url'`);
}

/**
 * A plain-text document is text the model reads; a base64 one (a PDF) is a document part, for the kinds that take
 * documents (the others refuse the call naming document input). URL and file sources, and citations (the answer's
 * text blocks would cite the document), have no domain form: they are Anthropic's only.
 */
function documentPart(block: Block, at: string, anthropicOnly: string[]): ContentPart {
  const source = (block.source ?? {}) as Record<string, unknown>;
  const title = typeof block.title === 'string' ? block.title : undefined;
  if ((block.citations as { enabled?: unknown } | undefined)?.enabled === true) anthropicOnly.push(`${at}.citations`);
  if (source.type === 'text' && typeof source.data === 'string') return { type: 'text', text: title !== undefined ? `${title}\n\n${source.data}` : source.data };
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || !DOCUMENT_MEDIA_TYPE.test(source.media_type)) throw new AnthropicRequestError(`${at}.source.media_type: a document media type is required`);
    if (typeof source.data !== 'string' || source.data === '') throw new AnthropicRequestError(`${at}.source.data: Field required`);
    return { type: 'document', document: { mediaType: source.media_type.toLowerCase(), data: source.data, ...(title !== undefined ? { name: title } : {}) } };
  }
  if (typeof source.type !== 'string') throw new AnthropicRequestError(`${at}.source.type: Field required`);
  anthropicOnly.push(`${at}.source.type: '${source.type}' document`);
  return { type: 'text', text: `[document${title !== undefined ? `: ${title}` : ''}]` };
}

const DOCUMENT_MEDIA_TYPE = /^(application|text)\/[a-z0-9.+-]+$/i;

function stringField(block: Record<string, unknown>, field: string, at: string): string {
  const value = block[field];
  if (typeof value !== 'string') throw new AnthropicRequestError(`${at}.${field}: ${value === undefined ? 'Field required' : 'Input should be a valid string'}`);
  return value;
}

/** One ajv error as Anthropic words its validation errors: the dotted path, then what is wrong. */
export function requestError(error: ErrorObject): AnthropicRequestError {
  const path = error.instancePath.split('/').slice(1).join('.');
  const at = (field?: string) => [path, field].filter((part) => part).join('.') || 'body';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return new AnthropicRequestError(`${at(String(params.additionalProperty))}: Extra inputs are not permitted`);
    case 'required':
      return new AnthropicRequestError(`${at(String(params.missingProperty))}: Field required`);
    case 'type':
      return new AnthropicRequestError(`${at()}: Input should be of type ${String(params.type).replace(/,/g, ' or ')}`);
    case 'enum':
      return new AnthropicRequestError(`${at()}: Input should be ${(params.allowedValues as unknown[]).map((value) => `'${String(value)}'`).join(', ')}`);
    case 'const':
      return new AnthropicRequestError(`${at()}: Input should be ${JSON.stringify(params.allowedValue)}`);
    case 'minimum':
    case 'maximum':
      return new AnthropicRequestError(`${at()}: Input should be ${params.comparison} ${params.limit}`);
    case 'minLength':
      return new AnthropicRequestError(`${at()}: String should have at least ${params.limit} character(s)`);
    case 'maxLength':
    case 'maxItems':
      return new AnthropicRequestError(`${at()}: at most ${params.limit} allowed`);
    default:
      return new AnthropicRequestError(`${at()}: Input is invalid`);
  }
}
