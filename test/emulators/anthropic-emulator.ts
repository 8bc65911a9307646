/**
 * Anthropic Messages API emulator: `x-api-key` and `anthropic-version` checks, request validation with the
 * API's own error shape (`{"type":"error","error":{"type","message"}}`), non-streaming and SSE answers,
 * `/v1/models` with cursor pagination, and the `anthropic-ratelimit-*` headers. Tool use is scripted: with tools
 * and a last user turn that is not tool results, the answer calls the tools (two `tool_use` blocks when two or
 * more tools are offered; the forced one under `tool_choice` `tool`), streamed as `input_json_delta` pieces;
 * after tool results the answer is text quoting them; under structured output the text is JSON of the schema. Image blocks are validated and counted in the reply. Text
 * is cut at `max_tokens` (one word per token) with stop reason `max_tokens`.
 *
 * Extended thinking as the API does it: with `thinking` on, the answer opens with a `thinking` block whose
 * `signature` is a MAC of its text (streamed as `thinking_delta`s and one `signature_delta`), or a
 * `redacted_thinking` block; thinking blocks sent back in the history must carry an intact signature, and with
 * thinking on, a last assistant turn that calls tools must start with its thinking block. Prompt caching: each
 * `cache_control` breakpoint (at most 4; `ttl` 5m or 1h) caches the prefix up to it, so a later request with the same
 * prefix reads it (`cache_read_input_tokens`) and a new one writes it (`cache_creation_input_tokens`, split by
 * tier in `cache_creation`); token counts are characters. `context_management` is refused without its
 * `anthropic-beta`, as the API refuses a beta field.
 *
 * Server tools and documents: a `web_search_*` tool makes the answer search once (a `server_tool_use` block, its
 * `web_search_tool_result` and a text block citing the result, `usage.server_tool_use.web_search_requests: 1`);
 * `document` blocks (PDF as base64 or URL, plain text, with or without citations) are validated and counted in
 * the reply. `POST /v1/messages/count_tokens` answers `{ input_tokens }` (emulatedTokenCount) for a body without
 * `max_tokens`, as the API does.
 */
import { createHmac } from 'node:crypto';
import { EmulatorReply, EmulatorRequest, EmulatorServer, startEmulator } from './emulator-server';

/** Appears in every emulator error body, so tests can prove no upstream body reaches an error message. */
export const ANTHROPIC_BODY_MARKER = 'anthropic-upstream-body-7d1f';
export const ANTHROPIC_EMULATOR_KEY = 'sk-ant-emulator-0123456789';

export interface AnthropicEmulatorOptions {
  apiKey?: string;
  /** Model ids the account can use, newest first as the API lists them. */
  models?: string[];
  /** Text of every answer; streamed answers split it on spaces. */
  reply?: string;
  /** When set, streamed answers fail after their first event with this error type (as the API does mid-stream). */
  streamError?: string;
  /** The input a scripted `tool_use` block gives a tool, by tool name; a tool not named gets input made from its schema. */
  toolInputs?: Record<string, Record<string, unknown>>;
  /** Prompt tokens reported as read from the prompt cache (`cache_read_input_tokens`, beside the uncached `input_tokens`). */
  cacheReadTokens?: number;
  /** With thinking on, answer with a `redacted_thinking` block instead of a readable one. */
  redactThinking?: boolean;
}

/** The beta that `context_management` needs, as the API names it. */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

const SIGNING_KEY = 'anthropic-emulator-thinking-key';
const mac = (text: string) => createHmac('sha256', SIGNING_KEY).update(text).digest('base64');

/** The signature of a thinking block's text: only this emulator can make one, and any change to the text breaks it. */
export function thinkingSignature(thinking: string): string {
  return `EqQB${mac(thinking)}${mac(`second:${thinking}`)}`;
}

/** Opaque redacted thinking: a payload and its MAC, base64 as a whole. */
function redactedData(payload: string): string {
  return Buffer.from(`${payload}.${mac(payload)}`).toString('base64');
}

function redactedDataValid(data: unknown): boolean {
  if (typeof data !== 'string') return false;
  const text = Buffer.from(data, 'base64').toString();
  const dot = text.lastIndexOf('.');
  return dot > 0 && mac(text.slice(0, dot)) === text.slice(dot + 1);
}

export interface AnthropicEmulator {
  server: EmulatorServer;
  url: string;
  /** Live settings: tests may change them between requests. */
  options: AnthropicEmulatorOptions & Required<Omit<AnthropicEmulatorOptions, 'streamError' | 'toolInputs' | 'cacheReadTokens' | 'redactThinking'>>;
  /** The text of every streamed answer, as written to the wire, in order. */
  streamsSent: string[];
  /** Forgets every cached prefix. */
  clearCache(): void;
  close(): Promise<void>;
}

/** The API's error body; the marker stands in for upstream text that must never be surfaced. */
export function anthropicError(type: string, message: string): Record<string, unknown> {
  return {
    type: 'error',
    error: { type, message: `${message} [${ANTHROPIC_BODY_MARKER}]` },
    request_id: 'req_emulator',
  };
}

const STATUS_OF: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

function fail(type: string, message: string): EmulatorReply {
  return { status: STATUS_OF[type] ?? 400, body: anthropicError(type, message) };
}

const RATE_LIMIT_HEADERS = {
  'anthropic-ratelimit-requests-limit': '50',
  'anthropic-ratelimit-requests-remaining': '49',
  'anthropic-ratelimit-requests-reset': '2030-01-01T00:00:00Z',
  'request-id': 'req_emulator',
};

export async function startAnthropicEmulator(options: AnthropicEmulatorOptions = {}): Promise<AnthropicEmulator> {
  const settings: AnthropicEmulator['options'] = {
    apiKey: options.apiKey ?? ANTHROPIC_EMULATOR_KEY,
    models: options.models ?? ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1'],
    reply: options.reply ?? 'Hello from the Anthropic emulator',
    streamError: options.streamError,
    toolInputs: options.toolInputs,
    cacheReadTokens: options.cacheReadTokens,
    redactThinking: options.redactThinking,
  };
  const server = await startEmulator();
  let messageCount = 0;
  const cachedPrefixes = new Set<string>();
  const streamsSent: string[] = [];

  /** Auth and version header checks every endpoint makes first. */
  const guard = (request: EmulatorRequest): EmulatorReply | undefined => {
    const key = request.headers['x-api-key'];
    if (key === undefined) return fail('authentication_error', 'x-api-key header is required');
    if (key !== settings.apiKey) return fail('authentication_error', 'invalid x-api-key');
    if (request.headers['anthropic-version'] === undefined) {
      return fail('invalid_request_error', 'anthropic-version: header is required');
    }
    return undefined;
  };

  server.route('POST', '/v1/messages', (request) => {
    const denied = guard(request);
    if (denied) return denied;
    const betas = String(request.headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim());
    const invalid = validateMessages(request.body, betas);
    if (invalid) return fail('invalid_request_error', invalid);
    const body = request.body as Record<string, unknown>;
    if (body.context_management !== undefined && !betas.includes(CONTEXT_MANAGEMENT_BETA)) {
      return fail('invalid_request_error', 'context_management: Extra inputs are not permitted');
    }
    const model = body.model as string;
    if (!settings.models.includes(model)) return fail('not_found_error', `model: ${model}`);
    messageCount += 1;
    const id = `msg_emulator_${messageCount}`;
    const input = cacheUsage(body, cachedPrefixes) ?? {
      input_tokens: JSON.stringify(body.messages).length,
      ...(settings.cacheReadTokens !== undefined ? { cache_read_input_tokens: settings.cacheReadTokens } : {}),
    };
    const { content, truncated } = withinMaxTokens(answerBlocks(body, settings, messageCount), body.max_tokens as number);
    const outputTokens = JSON.stringify(content).split(' ').length;
    const searches = content.filter((b) => b.type === 'server_tool_use' && b.name === 'web_search').length;
    if (searches > 0) Object.assign(input, { server_tool_use: { web_search_requests: searches } });
    const stopReason = truncated ? 'max_tokens' : content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
    if (body.stream === true) {
      const reply = streamReply(id, model, content, stopReason, input, outputTokens);
      if (settings.streamError)
        reply.chunks = [reply.chunks![0], sse('error', anthropicError(settings.streamError, 'stream failed'))];
      streamsSent.push(reply.chunks!.join(''));
      return reply;
    }
    return {
      headers: RATE_LIMIT_HEADERS,
      body: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { ...input, output_tokens: outputTokens },
      },
    };
  });

  server.route('POST', '/v1/messages/count_tokens', (request) => {
    const denied = guard(request);
    if (denied) return denied;
    const body = request.body as Record<string, unknown>;
    for (const extra of ['max_tokens', 'stream', 'temperature']) {
      if (body?.[extra] !== undefined) return fail('invalid_request_error', `${extra}: Extra inputs are not permitted`);
    }
    const betas = String(request.headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim());
    const invalid = validateMessages({ ...body, max_tokens: COUNT_TOKENS_MAX }, betas);
    if (invalid) return fail('invalid_request_error', invalid);
    if (!settings.models.includes(body.model as string)) return fail('not_found_error', `model: ${String(body.model)}`);
    return { headers: RATE_LIMIT_HEADERS, body: { input_tokens: emulatedTokenCount(body) } };
  });

  server.route('GET', '/v1/models', (request) => {
    const denied = guard(request);
    if (denied) return denied;
    const limit = Number(request.query.get('limit') ?? '20');
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      return fail('invalid_request_error', 'limit: must be between 1 and 1000');
    }
    const afterId = request.query.get('after_id');
    const start = afterId === null ? 0 : settings.models.indexOf(afterId) + 1;
    const page = settings.models.slice(start, start + limit);
    return {
      headers: RATE_LIMIT_HEADERS,
      body: {
        data: page.map(modelObject),
        has_more: start + limit < settings.models.length,
        first_id: page[0] ?? null,
        last_id: page[page.length - 1] ?? null,
      },
    };
  });

  server.route('GET', /^\/v1\/models\/(?<id>[^/]+)$/, (request) => {
    const denied = guard(request);
    if (denied) return denied;
    const id = decodeURIComponent(request.params.id);
    if (!settings.models.includes(id)) return fail('not_found_error', `model: ${id}`);
    return { headers: RATE_LIMIT_HEADERS, body: modelObject(id) };
  });

  return { server, url: server.url, options: settings, streamsSent, clearCache: () => cachedPrefixes.clear(), close: () => server.close() };
}

/** The max_tokens a count is validated with: a count has none, and any thinking budget fits below it. */
const COUNT_TOKENS_MAX = 1_000_000_000;

/** The emulator's token count of a request: one token per character of its system prompt, tools and messages. */
export function emulatedTokenCount(body: Record<string, unknown>): number {
  return JSON.stringify([body.system ?? null, body.tools ?? null, body.messages]).length;
}

function modelObject(id: string): Record<string, unknown> {
  return { type: 'model', id, display_name: id, created_at: '2025-09-29T00:00:00Z' };
}

/** The checks the real API makes before it looks at the model. */
/** A beta under which system messages may stand in the list (the date is an example: the prefix is what is matched). */
export const MID_CONVERSATION_SYSTEM_BETA = 'mid-conversation-system-2026-01-01';

function validateMessages(body: unknown, betas: readonly string[] = []): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body: expected an object';
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '') return 'model: Field required';
  if (b.max_tokens === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(b.max_tokens) || (b.max_tokens as number) < 1) return 'max_tokens: must be a positive integer';
  if (!Array.isArray(b.messages) || b.messages.length === 0) return 'messages: at least one message is required';
  for (const [i, message] of b.messages.entries()) {
    const m = message as Record<string, unknown>;
    if (m?.role === 'system' && betas.some((beta) => beta.startsWith('mid-conversation-system-'))) {
      if (typeof m.content !== 'string' && !Array.isArray(m.content)) return `messages.${i}.content: Field required`;
      continue;
    }
    if (m?.role === 'system') {
      return `messages.${i}.role: Unexpected role "system". The Messages API accepts a top-level \`system\` parameter, not "system" as an input message role.`;
    }
    if (m?.role !== 'user' && m?.role !== 'assistant')
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return `messages.${i}.content: Field required`;
    if (Array.isArray(m.content)) {
      for (const [j, block] of m.content.entries()) {
        const invalid = validateBlock(block, m.role, `messages.${i}.content.${j}`);
        if (invalid) return invalid;
      }
    }
  }
  const pairing = validateToolPairing(b.messages as Array<Record<string, unknown>>);
  if (pairing) return pairing;
  const thinking = validateThinking(b);
  if (thinking) return thinking;
  const breakpoints = validateCacheControl(b);
  if (breakpoints) return breakpoints;
  if (b.top_k !== undefined && (!Number.isInteger(b.top_k) || (b.top_k as number) < 0)) return 'top_k: Input should be a valid integer, greater than or equal to 0';
  const tools = validateTools(b.tools, b.tool_choice);
  if (tools) return tools;
  if (b.system !== undefined && typeof b.system !== 'string' && !Array.isArray(b.system)) {
    return 'system: Input should be a valid string';
  }
  if (Array.isArray(b.system)) {
    const notText = (b.system as Block[]).findIndex((block) => block?.type !== 'text' || typeof block.text !== 'string');
    if (notText !== -1) return `system.${notText}.type: Input should be 'text'`;
  }
  for (const key of ['temperature', 'top_p'] as const) {
    const value = b[key];
    if (value !== undefined && (typeof value !== 'number' || value < 0 || value > 1)) {
      return `${key}: Input should be less than or equal to 1`;
    }
  }
  if (b.stop_sequences !== undefined && !Array.isArray(b.stop_sequences))
    return 'stop_sequences: Input should be a valid list';
  return undefined;
}

type Block = Record<string, unknown>;
const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

function validateBlock(value: unknown, role: unknown, at: string): string | undefined {
  if (typeof value !== 'object' || value === null) return `${at}: Input should be an object`;
  const block = value as Block;
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' && block.text !== '' ? undefined : `${at}.text: text content blocks must be non-empty`;
    case 'image': {
      if (role !== 'user') return `${at}: image blocks are only allowed in user messages`;
      const source = block.source as Block | undefined;
      if (source?.type === 'base64') {
        if (!IMAGE_MEDIA_TYPES.includes(source.media_type as string)) return `${at}.source.media_type: Input should be ${IMAGE_MEDIA_TYPES.join(', ')}`;
        return typeof source.data === 'string' && source.data !== '' ? undefined : `${at}.source.data: Field required`;
      }
      if (source?.type === 'url') return typeof source.url === 'string' && /^https?:\/\//.test(source.url) ? undefined : `${at}.source.url: invalid URL`;
      return `${at}.source.type: Input should be 'base64' or 'url'`;
    }
    case 'tool_use':
      if (role !== 'assistant') return `${at}: tool_use blocks are only allowed in assistant messages`;
      if (typeof block.id !== 'string' || typeof block.name !== 'string') return `${at}: id and name are required`;
      return typeof block.input === 'object' && block.input !== null && !Array.isArray(block.input) ? undefined : `${at}.input: Input should be a valid dictionary`;
    case 'thinking':
      if (role !== 'assistant') return `${at}: thinking blocks are only allowed in assistant messages`;
      if (typeof block.thinking !== 'string') return `${at}.thinking: Field required`;
      return block.signature === thinkingSignature(block.thinking) ? undefined : `${at}: Invalid \`signature\` in \`thinking\` block`;
    case 'redacted_thinking':
      if (role !== 'assistant') return `${at}: redacted_thinking blocks are only allowed in assistant messages`;
      return redactedDataValid(block.data) ? undefined : `${at}.data: Invalid \`data\` in \`redacted_thinking\` block`;
    case 'document': {
      if (role !== 'user') return `${at}: document blocks are only allowed in user messages`;
      const source = block.source as Block | undefined;
      if (source?.type === 'base64') {
        if (source.media_type !== 'application/pdf') return `${at}.source.media_type: Input should be 'application/pdf'`;
        return typeof source.data === 'string' && source.data !== '' ? undefined : `${at}.source.data: Field required`;
      }
      if (source?.type === 'url') return typeof source.url === 'string' && /^https?:\/\//.test(source.url) ? undefined : `${at}.source.url: invalid URL`;
      if (source?.type === 'text') return typeof source.data === 'string' ? undefined : `${at}.source.data: Field required`;
      return `${at}.source.type: Input should be 'base64', 'url', 'text' or 'content'`;
    }
    case 'server_tool_use':
      if (role !== 'assistant') return `${at}: server_tool_use blocks are only allowed in assistant messages`;
      return typeof block.id === 'string' && typeof block.name === 'string' ? undefined : `${at}: id and name are required`;
    case 'web_search_tool_result':
      if (role !== 'assistant') return `${at}: web_search_tool_result blocks are only allowed in assistant messages`;
      return typeof block.tool_use_id === 'string' ? undefined : `${at}.tool_use_id: Field required`;
    case 'tool_result':
      if (role !== 'user') return `${at}: tool_result blocks are only allowed in user messages`;
      if (block.is_error !== undefined && typeof block.is_error !== 'boolean') return `${at}.is_error: Input should be a valid boolean`;
      return typeof block.tool_use_id === 'string' ? undefined : `${at}.tool_use_id: Field required`;
    default:
      return `${at}.type: unknown content block type`;
  }
}

const thinkingOn = (body: Block): boolean => ['enabled', 'adaptive'].includes((body.thinking as Block | undefined)?.type as string);

/**
 * The thinking setting, and the API's rule for tool loops with thinking on: the last assistant turn, when it
 * calls tools, must begin with the thinking block it was answered with (which is why a gateway that drops
 * thinking blocks breaks every agent loop with thinking).
 */
function validateThinking(body: Block): string | undefined {
  const thinking = body.thinking as Block | undefined;
  if (thinking?.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (!Number.isInteger(budget) || (budget as number) < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if ((budget as number) >= (body.max_tokens as number)) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  }
  if (!thinkingOn(body)) return undefined;
  const messages = body.messages as Block[];
  const index = messages.map((m) => m.role).lastIndexOf('assistant');
  const content = messages[index]?.content;
  if (!Array.isArray(content) || !(content as Block[]).some((b) => b.type === 'tool_use')) return undefined;
  const first = (content as Block[])[0];
  if (first.type === 'thinking' || first.type === 'redacted_thinking') return undefined;
  return `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
}

/** Every `cache_control` where the API takes one, in prompt order (tools, system, messages), with where it is. */
function cacheControls(body: Block): Array<{ at: string; value: unknown }> {
  const found: Array<{ at: string; value: unknown }> = [];
  const visit = (block: Block | undefined, at: string) => {
    if (block?.cache_control !== undefined) found.push({ at: `${at}.cache_control`, value: block.cache_control });
  };
  ((body.tools as Block[] | undefined) ?? []).forEach((tool, i) => visit(tool, `tools.${i}`));
  if (Array.isArray(body.system)) (body.system as Block[]).forEach((block, i) => visit(block, `system.${i}`));
  (body.messages as Block[]).forEach((message, i) => {
    if (Array.isArray(message.content)) (message.content as Block[]).forEach((block, j) => visit(block, `messages.${i}.content.${j}`));
  });
  return found;
}

function validateCacheControl(body: Block): string | undefined {
  const controls = cacheControls(body);
  if (controls.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${controls.length}.`;
  for (const { at, value } of controls) {
    const control = value as Block | null;
    if (control === null) continue;
    if (control?.type !== 'ephemeral') return `${at}.type: Input should be 'ephemeral'`;
    if (control.ttl !== undefined && control.ttl !== '5m' && control.ttl !== '1h') return `${at}.ttl: Input should be '5m' or '1h'`;
  }
  return undefined;
}

/**
 * Usage of a request with cache breakpoints (undefined without any): the prompt is read in order (tools,
 * system, messages; one character per token); the longest prefix ending at a breakpoint seen before is read from
 * the cache, each later breakpoint's new part is written at its ttl, and the rest is `input_tokens`.
 */
function cacheUsage(body: Block, cached: Set<string>): Record<string, unknown> | undefined {
  const parts: Array<{ text: string; ttl?: string }> = [];
  const ttlOf = (block: Block) => (block.cache_control ? (((block.cache_control as Block).ttl as string | undefined) ?? '5m') : undefined);
  for (const tool of (body.tools as Block[] | undefined) ?? []) parts.push({ text: JSON.stringify(tool), ttl: ttlOf(tool) });
  if (typeof body.system === 'string') parts.push({ text: body.system });
  else for (const block of (body.system as Block[] | undefined) ?? []) parts.push({ text: String(block.text), ttl: ttlOf(block) });
  for (const message of body.messages as Block[]) {
    if (typeof message.content === 'string') parts.push({ text: `${String(message.role)}:${message.content}` });
    else for (const block of message.content as Block[]) parts.push({ text: `${String(message.role)}:${JSON.stringify({ ...block, cache_control: undefined })}`, ttl: ttlOf(block) });
  }
  if (!parts.some((part) => part.ttl !== undefined)) return undefined;
  let prefix = '';
  const breakpoints: Array<{ key: string; at: number; ttl: string }> = [];
  for (const part of parts) {
    prefix += part.text;
    if (part.ttl) breakpoints.push({ key: prefix, at: prefix.length, ttl: part.ttl });
  }
  const hit = breakpoints.filter((point) => cached.has(point.key)).at(-1);
  let covered = hit?.at ?? 0;
  const written = { '5m': 0, '1h': 0 } as Record<string, number>;
  for (const point of breakpoints) {
    if (point.at <= covered) continue;
    written[point.ttl] += point.at - covered;
    covered = point.at;
    cached.add(point.key);
  }
  const read = hit?.at ?? 0;
  const writes = written['5m'] + written['1h'];
  return {
    input_tokens: prefix.length - read - writes,
    cache_creation_input_tokens: writes,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: written['5m'], ephemeral_1h_input_tokens: written['1h'] },
  };
}

/** Every tool_use must be answered by a tool_result in the very next (user) message, as the API requires. */
function validateToolPairing(messages: Array<Record<string, unknown>>): string | undefined {
  for (const [i, message] of messages.entries()) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    const ids = (message.content as Block[]).filter((b) => b.type === 'tool_use').map((b) => b.id);
    if (ids.length === 0) continue;
    const next = messages[i + 1]?.content;
    const answered = Array.isArray(next) ? (next as Block[]).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id) : [];
    const missing = ids.find((toolId) => !answered.includes(toolId));
    if (missing !== undefined) {
      return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${String(missing)}`;
    }
  }
  return undefined;
}

/** Server tool types the emulator knows; only web search answers differently. */
const SERVER_TOOLS = /^(web_search|web_fetch|code_execution|bash|text_editor)_\d{8}$/;

function validateTools(tools: unknown, choice: unknown): string | undefined {
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return 'tools: Input should be a valid list';
    for (const [i, tool] of (tools as Block[]).entries()) {
      if (typeof tool.type === 'string' && tool.type !== 'custom') {
        if (!SERVER_TOOLS.test(tool.type)) return `tools.${i}.type: unknown tool type '${tool.type}'`;
        continue;
      }
      if (typeof tool.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) return `tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
      const schema = tool.input_schema as Block | undefined;
      if (schema?.type !== 'object') return `tools.${i}.input_schema.type: Input should be 'object'`;
    }
  }
  if (choice === undefined) return undefined;
  const c = choice as Block;
  if (!['auto', 'any', 'tool', 'none'].includes(c.type as string)) return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'";
  if (c.type === 'tool' && !(tools as Block[] | undefined)?.some((t) => t.name === c.name)) return `tool_choice.name: no tool named ${String(c.name)}`;
  return undefined;
}

/** A scripted argument object that satisfies simple schemas: each property gets a value of its type. */
function scriptedInput(schema: Block | undefined, call: number): Block {
  const properties = (schema?.properties ?? {}) as Record<string, Block>;
  return Object.fromEntries(
    Object.entries(properties).map(([name, property]) => {
      if (property.type === 'number' || property.type === 'integer') return [name, call];
      if (property.type === 'boolean') return [name, true];
      return [name, `${name}-${call}`];
    }),
  );
}

/** The scripted answer's content blocks, opened by a (signed or redacted) thinking block when thinking is on. */
function answerBlocks(body: Record<string, unknown>, settings: AnthropicEmulator['options'], messageCount: number): Block[] {
  const blocks = scriptedBlocks(body, settings, messageCount);
  if (!thinkingOn(body)) return blocks;
  if (settings.redactThinking) return [{ type: 'redacted_thinking', data: redactedData(`reasoning of message ${messageCount}`) }, ...blocks];
  const thinking = `Reasoning for message ${messageCount}: the user wants ${blocks.map((b) => b.type).join(' and ')}.`;
  return [{ type: 'thinking', thinking, signature: thinkingSignature(thinking) }, ...blocks];
}

function scriptedBlocks(body: Record<string, unknown>, settings: AnthropicEmulator['options'], messageCount: number): Block[] {
  const messages = body.messages as Array<Record<string, unknown>>;
  const last = messages[messages.length - 1];
  const lastBlocks = Array.isArray(last.content) ? (last.content as Block[]) : [];
  const results = lastBlocks.filter((b) => b.type === 'tool_result');
  if (results.length > 0) {
    return [{ type: 'text', text: `Tool results: ${results.map((r) => (typeof r.content === 'string' ? r.content : JSON.stringify(r.content))).join(' | ')}` }];
  }
  const allTools = (body.tools as Block[] | undefined) ?? [];
  const tools = allTools.filter((tool) => tool.type === undefined || tool.type === 'custom');
  const choice = body.tool_choice as Block | undefined;
  if (allTools.some((tool) => String(tool.type).startsWith('web_search_'))) return webSearchBlocks(lastBlocks, last.content, messageCount);
  if (tools.length > 0 && choice?.type !== 'none') {
    const forced = choice?.type === 'tool' ? tools.filter((t) => t.name === choice.name) : undefined;
    const single = choice?.disable_parallel_tool_use === true;
    const called = forced ?? tools.slice(0, single ? 1 : 2);
    const preamble: Block[] = choice?.type === 'tool' || choice?.type === 'any' ? [] : [{ type: 'text', text: 'Let me call a tool.' }];
    return [
      ...preamble,
      ...called.map((tool, i) => ({
        type: 'tool_use',
        id: `toolu_emulator_${messageCount}_${i}`,
        name: tool.name,
        input: settings.toolInputs?.[tool.name as string] ?? scriptedInput(tool.input_schema as Block, i + 1),
      })),
    ];
  }
  // Structured output (`output_config.format`, or the older `output_format`): the text is JSON of the schema.
  const format = ((body.output_config as Block | undefined)?.format ?? body.output_format) as Block | undefined;
  if (format?.type === 'json_schema') return [{ type: 'text', text: JSON.stringify(scriptedInput(format.schema as Block, messageCount)) }];
  const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Block[]) : []));
  const images = blocks.filter((b) => b.type === 'image').length;
  const documents = blocks.filter((b) => b.type === 'document').length;
  const seen = [images > 0 ? `images seen: ${images}` : '', documents > 0 ? `documents read: ${documents}` : ''].filter((part) => part !== '');
  return [{ type: 'text', text: seen.length > 0 ? `${settings.reply} (${seen.join(', ')})` : settings.reply }];
}

export const WEB_SEARCH_RESULT = { url: 'https://example.com/weather/paris', title: 'Paris weather' };

/** One search for the last user text, its result, and a text block citing it, as the API answers with web search on. */
function webSearchBlocks(lastBlocks: Block[], content: unknown, messageCount: number): Block[] {
  const query = typeof content === 'string' ? content : lastBlocks.filter((b) => b.type === 'text').map((b) => b.text).join(' ');
  const id = `srvtoolu_emulator_${messageCount}`;
  return [
    { type: 'server_tool_use', id, name: 'web_search', input: { query } },
    {
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: [{ type: 'web_search_result', ...WEB_SEARCH_RESULT, encrypted_content: `enc-${messageCount}`, page_age: null }],
    },
    {
      type: 'text',
      text: 'It is sunny in Paris.',
      citations: [{ type: 'web_search_result_location', ...WEB_SEARCH_RESULT, encrypted_index: `idx-${messageCount}`, cited_text: 'Sunny all day.' }],
    },
  ];
}

/**
 * The answer as a model with a `max_tokens` budget writes it, one word per token: text cut at the budget
 * (and later blocks dropped), which the API reports as stop reason `max_tokens`.
 */
function withinMaxTokens(blocks: Block[], maxTokens: number): { content: Block[]; truncated: boolean } {
  const content: Block[] = [];
  let left = maxTokens;
  for (const block of blocks) {
    if (block.type !== 'text') {
      content.push(block);
      continue;
    }
    const words = (block.text as string).split(' ');
    if (words.length > left) {
      if (left > 0) content.push({ ...block, text: words.slice(0, left).join(' ') });
      return { content, truncated: true };
    }
    left -= words.length;
    content.push(block);
  }
  return { content, truncated: false };
}

/** A JSON text cut in three pieces, as the API streams tool input in several partial_json deltas. */
function pieces(json: string): string[] {
  const third = Math.max(1, Math.ceil(json.length / 3));
  return [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)].filter((p) => p !== '');
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The event sequence of a streamed message: start, per content block a start, its deltas (text split on spaces,
 * tool input as an empty then several partial_json pieces) and a stop, then the delta with stop reason, stop.
 */
function streamReply(
  id: string,
  model: string,
  content: Block[],
  stopReason: string,
  input: Record<string, unknown>,
  outputTokens: number,
): EmulatorReply {
  const blockEvents = content.flatMap((block, index) => {
    const delta = (d: Block) => sse('content_block_delta', { type: 'content_block_delta', index, delta: d });
    if (block.type === 'thinking') {
      const words = (block.thinking as string).split(' ');
      return [
        sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        ...words.map((word, i) => delta({ type: 'thinking_delta', thinking: i === 0 ? word : ` ${word}` })),
        delta({ type: 'signature_delta', signature: block.signature }),
        sse('content_block_stop', { type: 'content_block_stop', index }),
      ];
    }
    if (block.type === 'redacted_thinking') {
      return [sse('content_block_start', { type: 'content_block_start', index, content_block: block }), sse('content_block_stop', { type: 'content_block_stop', index })];
    }
    if (block.type === 'web_search_tool_result') {
      return [sse('content_block_start', { type: 'content_block_start', index, content_block: block }), sse('content_block_stop', { type: 'content_block_stop', index })];
    }
    if (block.type === 'text') {
      const words = (block.text as string).split(' ');
      const citations = (block.citations as Block[] | undefined) ?? [];
      return [
        sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '', ...(block.citations ? { citations: [] } : {}) } }),
        ...(index === 0 ? [sse('ping', { type: 'ping' })] : []),
        ...citations.map((citation) => delta({ type: 'citations_delta', citation })),
        ...words.map((word, i) => delta({ type: 'text_delta', text: i === 0 ? word : ` ${word}` })),
        sse('content_block_stop', { type: 'content_block_stop', index }),
      ];
    }
    return [
      sse('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }),
      delta({ type: 'input_json_delta', partial_json: '' }),
      ...pieces(JSON.stringify(block.input)).map((piece) => delta({ type: 'input_json_delta', partial_json: piece })),
      sse('content_block_stop', { type: 'content_block_stop', index }),
    ];
  });
  const chunks = [
    sse('message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...input, output_tokens: 1 },
      },
    }),
    ...blockEvents,
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    sse('message_stop', { type: 'message_stop' }),
  ];
  return { headers: { ...RATE_LIMIT_HEADERS, 'content-type': 'text/event-stream' }, chunks };
}
