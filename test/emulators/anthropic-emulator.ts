/**
 * Anthropic Messages API emulator: `x-api-key` and `anthropic-version` checks, request validation with the
 * API's own error shape (`{"type":"error","error":{"type","message"}}`), non-streaming and SSE answers,
 * `/v1/models` with cursor pagination, and the `anthropic-ratelimit-*` headers.
 */
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
}

export interface AnthropicEmulator {
  server: EmulatorServer;
  url: string;
  /** Live settings: tests may change them between requests. */
  options: AnthropicEmulatorOptions & Required<Omit<AnthropicEmulatorOptions, 'streamError'>>;
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
  };
  const server = await startEmulator();
  let messageCount = 0;

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
    const invalid = validateMessages(request.body);
    if (invalid) return fail('invalid_request_error', invalid);
    const body = request.body as Record<string, unknown>;
    const model = body.model as string;
    if (!settings.models.includes(model)) return fail('not_found_error', `model: ${model}`);
    messageCount += 1;
    const id = `msg_emulator_${messageCount}`;
    const inputTokens = JSON.stringify(body.messages).length;
    const outputTokens = settings.reply.split(' ').length;
    if (body.stream === true) {
      const reply = streamReply(id, model, settings.reply, inputTokens, outputTokens);
      if (settings.streamError)
        reply.chunks = [reply.chunks![0], sse('error', anthropicError(settings.streamError, 'stream failed'))];
      return reply;
    }
    return {
      headers: RATE_LIMIT_HEADERS,
      body: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: settings.reply }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: outputTokens },
      },
    };
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

  return { server, url: server.url, options: settings, close: () => server.close() };
}

function modelObject(id: string): Record<string, unknown> {
  return { type: 'model', id, display_name: id, created_at: '2025-09-29T00:00:00Z' };
}

/** The checks the real API makes before it looks at the model. */
function validateMessages(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body: expected an object';
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '') return 'model: Field required';
  if (b.max_tokens === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(b.max_tokens) || (b.max_tokens as number) < 1) return 'max_tokens: must be a positive integer';
  if (!Array.isArray(b.messages) || b.messages.length === 0) return 'messages: at least one message is required';
  for (const [i, message] of b.messages.entries()) {
    const m = message as Record<string, unknown>;
    if (m?.role === 'system') {
      return `messages.${i}.role: Unexpected role "system". The Messages API accepts a top-level \`system\` parameter, not "system" as an input message role.`;
    }
    if (m?.role !== 'user' && m?.role !== 'assistant')
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return `messages.${i}.content: Field required`;
  }
  if (b.system !== undefined && typeof b.system !== 'string' && !Array.isArray(b.system)) {
    return 'system: Input should be a valid string';
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

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The event sequence of a streamed message: start, one text block of deltas, delta with stop reason, stop. */
function streamReply(
  id: string,
  model: string,
  text: string,
  inputTokens: number,
  outputTokens: number,
): EmulatorReply {
  const words = text.split(' ');
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
        usage: { input_tokens: inputTokens, output_tokens: 1 },
      },
    }),
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    sse('ping', { type: 'ping' }),
    ...words.map((word, i) =>
      sse('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: i === 0 ? word : ` ${word}` },
      }),
    ),
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    sse('message_stop', { type: 'message_stop' }),
  ];
  return { headers: { ...RATE_LIMIT_HEADERS, 'content-type': 'text/event-stream' }, chunks };
}
