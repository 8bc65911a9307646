/**
 * Ollama emulator: `/api/chat` (NDJSON unless the body says `"stream": false`), `/api/embed` (string or
 * array `input`), `/api/tags` (names carry a tag such as `:latest`), and Ollama's `{"error": "..."}` bodies:
 * 400 for a missing model field, 404 for a model that is not pulled. Tools as Ollama documents them:
 * `tools: [{type:'function', function:{name, description, parameters}}]` in, `message.tool_calls:
 * [{function:{index, name, arguments: {...}}}]` out (no ids, as servers before 0.12 send them; streamed whole,
 * each in its own line before the final one), tool results as `{role:'tool', content, tool_name}`, `format`
 * "json" or a schema object, and base64 `images` on a message (400 "illegal base64 data" otherwise).
 * Answers: after tool messages, text quoting their contents (never more calls); under `format`, JSON (matching
 * the schema object); text is cut at `options.num_predict` (one word per token) with done_reason `length`.
 */
import { EmulatorReply, EmulatorServer, startEmulator } from './emulator-server';

/** Appears in every emulator error body, so tests can prove no upstream body reaches an error message. */
export const OLLAMA_BODY_MARKER = 'ollama-upstream-body-93be';

export interface OllamaEmulatorOptions {
  /** Pulled models as `/api/tags` names them. */
  models?: string[];
  /** Length of every returned vector. */
  dimensions?: number;
  reply?: string;
  /** When set, streamed answers send one chunk and then an `{"error": ...}` line. */
  streamError?: boolean;
  /** When set and the request has tools, the model calls these (their names must be among the tools). */
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** The final object's done_reason (default `stop`). */
  doneReason?: string;
}

export interface OllamaEmulator {
  server: EmulatorServer;
  url: string;
  /** Live settings: tests may change them between requests. */
  options: OllamaEmulatorOptions & Required<Omit<OllamaEmulatorOptions, 'streamError' | 'toolCalls' | 'doneReason'>>;
  close(): Promise<void>;
}

export function ollamaError(message: string): Record<string, unknown> {
  return { error: `${message} [${OLLAMA_BODY_MARKER}]` };
}

function fail(status: number, message: string): EmulatorReply {
  return { status, body: ollamaError(message) };
}

/** Ollama resolves a name without a tag to `:latest`. */
function resolve(models: string[], name: string): string | undefined {
  const wanted = name.includes(':') ? name : `${name}:latest`;
  return models.find((m) => m === wanted);
}

export async function startOllamaEmulator(options: OllamaEmulatorOptions = {}): Promise<OllamaEmulator> {
  const settings: OllamaEmulator['options'] = {
    models: options.models ?? ['llama3.2:latest', 'nomic-embed-text:latest', 'qwen2.5:7b'],
    dimensions: options.dimensions ?? 6,
    reply: options.reply ?? 'Hello from the Ollama emulator',
    streamError: options.streamError,
    toolCalls: options.toolCalls,
    doneReason: options.doneReason,
  };
  const server = await startEmulator();

  /** The model checks both endpoints make, with Ollama's statuses and wording. */
  const modelCheck = (body: unknown): { model?: string; reply?: EmulatorReply } => {
    if (body === undefined) return { reply: fail(400, 'missing request body') };
    const name = (body as { model?: unknown }).model;
    if (typeof name !== 'string' || name === '') return { reply: fail(400, 'model is required') };
    if (!resolve(settings.models, name)) return { reply: fail(404, `model "${name}" not found, try pulling it first`) };
    return { model: name };
  };

  server.route('POST', '/api/chat', (request) => {
    const checked = modelCheck(request.body);
    if (checked.reply) return checked.reply;
    const body = request.body as Record<string, unknown>;
    if (body.messages !== undefined && !Array.isArray(body.messages)) return fail(400, 'messages must be an array');
    const messages = (body.messages ?? []) as Array<Record<string, unknown>>;
    for (const m of messages) {
      if (!['system', 'user', 'assistant', 'tool'].includes(m.role as string)) return fail(400, 'invalid message role');
      if (m.images !== undefined && !(Array.isArray(m.images) && m.images.every(isBase64))) {
        return fail(400, 'illegal base64 data');
      }
      if (m.tool_calls !== undefined && !validToolCalls(m.tool_calls)) return fail(400, 'invalid tool_calls');
    }
    const tools = body.tools;
    if (tools !== undefined && !validTools(tools)) return fail(400, 'invalid tools');
    if (body.format !== undefined && body.format !== 'json' && (typeof body.format !== 'object' || body.format === null)) {
      return fail(400, 'invalid format');
    }
    const toolNames = Array.isArray(tools) ? tools.map((t) => (t as { function: { name: string } }).function.name) : [];
    const toolResults = trailingToolResults(messages);
    const calls = toolNames.length > 0 && toolResults.length === 0 ? (settings.toolCalls ?? []) : [];
    if (calls.some((c) => !toolNames.includes(c.name))) return fail(500, 'model called an undefined tool');
    const toolCalls = calls.map((c, index) => ({ function: { index, name: c.name, arguments: c.arguments } }));
    const model = checked.model!;
    const { text: reply, truncated } = withinNumPredict(answerText(body.format, toolResults, settings.reply), body.options);
    const stats = { prompt_eval_count: JSON.stringify(messages).length, eval_count: reply.split(' ').length };
    const final = {
      model,
      created_at: new Date().toISOString(),
      message: { role: 'assistant', content: '' },
      done: true,
      done_reason: settings.doneReason ?? (truncated ? 'length' : 'stop'),
      total_duration: 1000,
      load_duration: 10,
      ...stats,
    };
    if (body.stream === false) {
      const message = toolCalls.length > 0
        ? { role: 'assistant', content: '', tool_calls: toolCalls }
        : { role: 'assistant', content: reply };
      return { body: { ...final, message } };
    }
    // Without "stream": false Ollama answers with NDJSON: one object per piece, then the final statistics.
    const line = (message: Record<string, unknown>) =>
      JSON.stringify({ model, created_at: final.created_at, message: { role: 'assistant', ...message }, done: false }) + '\n';
    const pieces = reply.split(' ').map((word, i) => (i === 0 ? word : ` ${word}`));
    const lines =
      toolCalls.length > 0
        ? toolCalls.map((call) => line({ content: '', tool_calls: [call] }))
        : pieces.map((content) => line({ content }));
    const chunks = settings.streamError
      ? [lines[0], JSON.stringify(ollamaError('runner crashed')) + '\n']
      : [...lines, JSON.stringify(final) + '\n'];
    return { headers: { 'content-type': 'application/x-ndjson' }, chunks };
  });

  server.route('POST', '/api/embed', (request) => {
    const checked = modelCheck(request.body);
    if (checked.reply) return checked.reply;
    const input = (request.body as { input?: unknown }).input;
    const texts = typeof input === 'string' ? [input] : input;
    if (!Array.isArray(texts) || !texts.every((t) => typeof t === 'string')) return fail(400, 'invalid input type');
    return {
      body: {
        model: checked.model,
        embeddings: texts.map((text) => vectorFor(text, settings.dimensions)),
        total_duration: 1000,
        load_duration: 10,
        prompt_eval_count: texts.join(' ').length,
      },
    };
  });

  server.route('GET', '/api/tags', () => ({
    body: {
      models: settings.models.map((name) => ({
        name,
        model: name,
        modified_at: '2025-01-01T00:00:00Z',
        size: 1_000_000,
        digest: 'sha256:emulator',
        details: { format: 'gguf', family: 'llama', parameter_size: '3B', quantization_level: 'Q4_K_M' },
      })),
    },
  }));

  return { server, url: server.url, options: settings, close: () => server.close() };
}

/** The contents of the tool messages that end the conversation: results the model answers in text. */
function trailingToolResults(messages: Array<Record<string, unknown>>): string[] {
  let start = messages.length;
  while (start > 0 && messages[start - 1].role === 'tool') start -= 1;
  return messages.slice(start).map((m) => String(m.content));
}

/** Text quoting tool results; JSON under `format` (matching a schema object); else the configured reply. */
function answerText(format: unknown, toolResults: string[], reply: string): string {
  if (toolResults.length > 0) return `Tool results: ${toolResults.join(' | ')}`;
  if (format === 'json') return JSON.stringify({ reply });
  if (typeof format === 'object') return JSON.stringify(sampleFor(format));
  return reply;
}

/** A value matching a simple JSON schema, so structured answers parse. */
function sampleFor(schema: unknown): unknown {
  const s = (schema ?? {}) as { type?: unknown; properties?: Record<string, unknown>; items?: unknown; enum?: unknown[] };
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  switch (Array.isArray(s.type) ? s.type[0] : s.type) {
    case 'string':
      return 'ollama';
    case 'number':
    case 'integer':
      return 3;
    case 'boolean':
      return true;
    case 'array':
      return [sampleFor(s.items)];
    default:
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([key, value]) => [key, sampleFor(value)]));
  }
}

/** One word per token: text longer than `options.num_predict` is cut there, which Ollama reports as done_reason `length`. */
function withinNumPredict(text: string, options: unknown): { text: string; truncated: boolean } {
  const limit = (options as { num_predict?: unknown } | undefined)?.num_predict;
  const words = text.split(' ');
  if (typeof limit !== 'number' || limit < 0 || words.length <= limit) return { text, truncated: false };
  return { text: words.slice(0, limit).join(' '), truncated: true };
}

function isBase64(value: unknown): boolean {
  // A search for a character outside the alphabet, not a quantified pattern, which a 15 MiB image can overflow.
  if (typeof value !== 'string' || value.length === 0 || /[^A-Za-z0-9+/=]/.test(value)) return false;
  const padding = value.indexOf('=');
  return padding === -1 || (padding > 0 && value.length - padding <= 2 && /^=+$/.test(value.slice(padding)));
}

function validTools(tools: unknown): boolean {
  return (
    Array.isArray(tools) &&
    tools.every((t) => {
      const fn = (t as { type?: unknown; function?: { name?: unknown; parameters?: unknown } }).function;
      return (t as { type?: unknown }).type === 'function' && typeof fn?.name === 'string' && typeof fn.parameters === 'object';
    })
  );
}

/** Ollama parses `arguments` into a map: a JSON string there is a 400. */
function validToolCalls(calls: unknown): boolean {
  return (
    Array.isArray(calls) &&
    calls.every((c) => {
      const fn = (c as { function?: { name?: unknown; arguments?: unknown } }).function;
      return typeof fn?.name === 'string' && typeof fn.arguments === 'object' && fn.arguments !== null && !Array.isArray(fn.arguments);
    })
  );
}

/** Deterministic per text, so tests can tell inputs apart and check order. */
export function vectorFor(text: string, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, i) => (text.length * 7 + (text.charCodeAt(0) || 0) + i) / 1000);
}
