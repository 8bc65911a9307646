/**
 * Emulates the OpenAI chat-completions wire format and the quirks of the kinds that speak it:
 * - openai: Bearer auth -> 401 `{"error":{message,type,param,code}}`; 404 `model_not_found`; 400 on a
 *   malformed request; embeddings as float lists or base64 float32; x-ratelimit-* headers on every answer.
 * - mistral: 422 `extra_forbidden` on any undocumented body key; unknown model -> 400 `invalid_model`.
 * - deepseek: no `/v1` prefix and no embeddings route.
 * - xai: a wrong key is answered 400 with `{"code","error":"Incorrect API key provided..."}`; no embeddings.
 * - huggingface: chat under `/v1`, embeddings at `/hf-inference/models/<model>/pipeline/feature-extraction`.
 * - compatible: like openai, optionally without auth (vLLM, llama.cpp server).
 * Chat is scripted so a client's tool loop works: with `tools` and a user message last, it calls every tool
 * (or the one `tool_choice` names) with arguments made from the tool's schema, streamed as OpenAI does (id and
 * name first, arguments in pieces, calls interleaved by index); with a tool message last, it answers text
 * quoting the result; `response_format: json_schema` gets JSON matching the schema; image_url parts must be
 * http(s) or base64 data: URLs (400 `invalid_image_url` otherwise).
 * Every error body carries {@link UPSTREAM_MARKER} so tests can prove bodies never leak into messages.
 *
 * The openai flavour also serves the Responses API (`POST /v1/responses`, the shapes of the `openai` client's
 * types): the same script, answered as a Response object or as its named SSE events in OpenAI's order, numbered
 * from 0. A model of `reasoningModels` reasons first: a `reasoning` item whose `encrypted_content` (only when
 * `include` asks for `reasoning.encrypted_content`) is sealed by this emulator. Like the real API it keeps nothing
 * here, so it refuses what only a store could answer (`previous_response_id`, `item_reference`, a reasoning item
 * without its encrypted content), an `encrypted_content` it did not seal, an unknown parameter, and
 * `max_output_tokens` under 16. It keeps what it answered ({@link OpenAiEmulator.responsesSent}, and each stream's bytes).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { EmulatorReply, EmulatorRequest, EmulatorServer, startEmulator } from './emulator-server';

export const UPSTREAM_MARKER = 'UPSTREAM-BODY-MARKER-7f3a';

export type OpenAiFlavour = 'openai' | 'mistral' | 'deepseek' | 'xai' | 'huggingface' | 'compatible';

export interface OpenAiEmulatorOptions {
  flavour?: OpenAiFlavour;
  /** Undefined disables the auth check. */
  apiKey?: string;
  chatModels?: string[];
  embeddingModels?: string[];
  dimensions?: number;
  /** Models that reason before answering on the Responses API. */
  reasoningModels?: string[];
}

const MISTRAL_CHAT_KEYS = new Set([
  'model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'response_format',
  'tools', 'tool_choice', 'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls',
  'safe_prompt', 'prompt_mode', 'metadata',
]);
const MISTRAL_EMBED_KEYS = new Set(['model', 'input', 'metadata', 'output_dimension', 'output_dtype', 'encoding_format']);

export class OpenAiEmulator {
  readonly flavour: OpenAiFlavour;
  /** Each Response object this emulator answered whole, and each streamed one as the bytes it wrote. */
  readonly responsesSent: Array<Record<string, unknown>> = [];
  readonly responseStreamsSent: string[] = [];
  private midStreamErrors = 0;

  protected constructor(
    readonly server: EmulatorServer,
    protected readonly options: Required<Omit<OpenAiEmulatorOptions, 'apiKey'>> & { apiKey?: string },
  ) {
    this.flavour = options.flavour;
  }

  static async start(options: OpenAiEmulatorOptions = {}): Promise<OpenAiEmulator> {
    const flavour = options.flavour ?? 'openai';
    const emulator = new OpenAiEmulator(await startEmulator(), {
      flavour,
      apiKey: options.apiKey,
      chatModels: options.chatModels ?? ['gpt-test'],
      embeddingModels: options.embeddingModels ?? ['embed-test'],
      dimensions: options.dimensions ?? 4,
      reasoningModels: options.reasoningModels ?? [],
    });
    emulator.registerRoutes();
    return emulator;
  }

  /** The base URL an adapter of this flavour is configured with. */
  get url(): string {
    return this.server.url + this.prefix;
  }

  /** Scripts `times` 429 answers shaped like OpenAI's, with Retry-After and x-ratelimit-* headers. */
  rateLimitNext(retryAfter: string, times = 1): void {
    this.server.inject(
      {
        kind: 'status',
        status: 429,
        headers: {
          'retry-after': retryAfter,
          'x-ratelimit-limit-requests': '60',
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': `${retryAfter}s`,
        },
        body: openAiError(`Rate limit reached. ${UPSTREAM_MARKER}`, 'requests', 'rate_limit_exceeded'),
      },
      times,
    );
  }

  /** The next `times` streamed answers send two chunks, then an `error` frame (OpenAI's report of a failure after the 200). */
  midStreamErrorNext(times = 1): void {
    this.midStreamErrors = times;
  }

  /** Scripts `times` 5xx answers with an OpenAI-shaped body. */
  serverErrorNext(status = 503, times = 1): void {
    this.server.failNext(status, {
      times,
      body: openAiError(`The server is overloaded. ${UPSTREAM_MARKER}`, 'server_error', null),
    });
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private get prefix(): string {
    return this.options.flavour === 'deepseek' ? '' : '/v1';
  }

  protected registerRoutes(): void {
    const p = this.prefix;
    this.server.route('POST', `${p}/chat/completions`, (req) => this.guarded(req, () => this.chat(req)));
    this.server.route('GET', `${p}/models`, (req) => this.guarded(req, () => this.models()));
    if (this.options.flavour === 'openai') this.server.route('POST', `${p}/responses`, (req) => this.guarded(req, () => this.responses(req)));
    if (this.options.flavour === 'huggingface') {
      this.server.route('POST', /^\/hf-inference\/models\/(?<model>.+)\/pipeline\/feature-extraction$/, (req) =>
        this.guarded(req, () => this.featureExtraction(req)),
      );
    } else if (this.options.flavour !== 'deepseek' && this.options.flavour !== 'xai') {
      this.server.route('POST', `${p}/embeddings`, (req) => this.guarded(req, () => this.embeddings(req)));
    }
  }

  protected guarded(req: EmulatorRequest, next: () => EmulatorReply): EmulatorReply {
    const reply = this.authFailure(req) ?? next();
    return { ...reply, headers: { ...rateLimitHeaders(), ...reply.headers } };
  }

  protected authFailure(req: EmulatorRequest): EmulatorReply | undefined {
    const { apiKey, flavour } = this.options;
    if (apiKey === undefined || req.headers.authorization === `Bearer ${apiKey}`) return undefined;
    switch (flavour) {
      case 'xai':
        return {
          status: 400,
          body: {
            code: 'Client specified an invalid argument',
            error: `Incorrect API key provided: xa***ey. You can obtain an API key from https://console.x.ai. ${UPSTREAM_MARKER}`,
          },
        };
      case 'mistral':
        return { status: 401, body: { message: `Unauthorized ${UPSTREAM_MARKER}`, request_id: 'req-1' } };
      case 'huggingface':
        return { status: 401, body: { error: `Invalid credentials in Authorization header ${UPSTREAM_MARKER}` } };
      default:
        return {
          status: 401,
          body: openAiError(`Incorrect API key provided. ${UPSTREAM_MARKER}`, 'invalid_request_error', 'invalid_api_key'),
        };
    }
  }

  protected chat(req: EmulatorRequest): EmulatorReply {
    const body = req.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') return badRequest('We could not parse the JSON body of your request.', null);
    if (this.options.flavour === 'mistral') {
      const extra = Object.keys(body).find((k) => !MISTRAL_CHAT_KEYS.has(k));
      if (extra) return mistralExtraKey(extra);
    }
    if (typeof body.model !== 'string') return badRequest("you must provide a model parameter", 'model');
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return badRequest("Missing required parameter: 'messages'.", 'messages');
    }
    const invalid = validateMessages(body.messages as unknown[]) ?? validateTools(body.tools);
    if (invalid) return invalid;
    if (!this.options.chatModels.includes(body.model)) return this.unknownModel(body.model);

    const answer = scriptedAnswer(body);
    const text = answer.text;
    const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };
    if (body.stream === true) {
      const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      // OpenAI sends usage in an extra chunk on request; Mistral always puts it on the finishing chunk.
      const chunks = this.options.flavour === 'mistral'
        ? streamChunks(body.model, answer, undefined, usage)
        : streamChunks(body.model, answer, includeUsage ? usage : undefined);
      if (this.midStreamErrors > 0) {
        this.midStreamErrors -= 1;
        const failure = openAiError(`The server had an error while processing your request. ${UPSTREAM_MARKER}`, 'server_error', null);
        return { chunks: [...chunks.slice(0, 2), `data: ${JSON.stringify(failure)}\n\n`], headers: { 'content-type': 'text/event-stream' } };
      }
      return { chunks, headers: { 'content-type': 'text/event-stream' } };
    }
    return {
      body: {
        id: 'chatcmpl-emulated',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [
          {
            index: 0,
            message: answer.toolCalls
              ? { role: 'assistant', content: null, tool_calls: answer.toolCalls }
              : { role: 'assistant', content: text },
            finish_reason: answer.toolCalls ? 'tool_calls' : 'stop',
          },
        ],
        usage,
      },
    };
  }

  protected responses(req: EmulatorRequest): EmulatorReply {
    const body = req.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') return badRequest('We could not parse the JSON body of your request.', null);
    const unknown = Object.keys(body).find((key) => !RESPONSES_KEYS.has(key));
    if (unknown) return badRequest(`Unknown parameter: '${unknown}'.`, unknown, 'unknown_parameter');
    if (typeof body.model !== 'string') return badRequest("Missing required parameter: 'model'.", 'model');
    const store = body.store !== false;
    if (typeof body.previous_response_id === 'string') {
      return badRequest(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id', 'previous_response_not_found');
    }
    if (typeof body.max_output_tokens === 'number' && body.max_output_tokens < 16) {
      return badRequest("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16.", 'max_output_tokens', 'integer_below_min_value');
    }
    const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
    if (!Array.isArray(input)) return badRequest("Invalid type for 'input': expected a string or an array of input items.", 'input');
    const invalid = validateResponsesInput(input as Array<Record<string, unknown>>, store) ?? validateResponsesTools(body.tools);
    if (invalid) return invalid;
    if (!this.options.chatModels.includes(body.model)) return this.unknownModel(body.model);

    const answer = scriptedResponsesAnswer(body, input as Array<Record<string, unknown>>);
    const reasoning = this.options.reasoningModels.includes(body.model) ? `Thinking about: ${answer.text || 'which tool to call'}` : undefined;
    const sealed = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
    const items = responseItems(answer, reasoning, sealed);
    const reasoningTokens = reasoning ? 5 : 0;
    const usage = { input_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3 + reasoningTokens, output_tokens_details: { reasoning_tokens: reasoningTokens }, total_tokens: 10 + reasoningTokens };
    const response = responseObject(body, store);
    if (body.stream !== true) {
      const whole = { ...response, status: 'completed', output: items, usage };
      this.responsesSent.push(whole);
      return { body: whole };
    }

    let sequence = 0;
    const event = (type: string, payload: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...payload })}\n\n`;
    const opening = { ...response, status: 'in_progress', output: [], usage: null };
    const chunks = [event('response.created', { response: opening }), event('response.in_progress', { response: opening })];
    items.forEach((item, index) => chunks.push(...itemEvents(item, index, event)));
    if (this.midStreamErrors > 0) {
      this.midStreamErrors -= 1;
      chunks.splice(3);
      chunks.push(event('error', { code: 'server_error', message: `The server had an error while processing your request. ${UPSTREAM_MARKER}`, param: null }));
    } else chunks.push(event('response.completed', { response: { ...response, status: 'completed', output: items, usage } }));
    this.responseStreamsSent.push(chunks.join(''));
    return { chunks, headers: { 'content-type': 'text/event-stream' } };
  }

  protected embeddings(req: EmulatorRequest): EmulatorReply {
    const body = req.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') return badRequest('We could not parse the JSON body of your request.', null);
    if (this.options.flavour === 'mistral') {
      const extra = Object.keys(body).find((k) => !MISTRAL_EMBED_KEYS.has(k));
      if (extra) return mistralExtraKey(extra);
    }
    if (typeof body.model !== 'string') return badRequest('you must provide a model parameter', 'model');
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.length === 0 || inputs.some((i) => typeof i !== 'string')) {
      return badRequest("'input' must be a string or a non-empty array of strings.", 'input');
    }
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') return badRequest("'encoding_format' must be float or base64.", 'encoding_format');
    if (!this.options.embeddingModels.includes(body.model)) return this.unknownModel(body.model);
    return {
      body: {
        object: 'list',
        data: (inputs as string[]).map((text, index) => {
          const vector = vectorFor(text, this.options.dimensions);
          return { object: 'embedding', index, embedding: format === 'base64' ? toBase64(vector) : vector };
        }),
        model: body.model,
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      },
    };
  }

  private featureExtraction(req: EmulatorRequest): EmulatorReply {
    const model = req.params.model;
    if (!this.options.embeddingModels.includes(model)) {
      return { status: 404, body: { error: `Model ${model} does not exist ${UPSTREAM_MARKER}` } };
    }
    const inputs = (req.body as { inputs?: unknown } | undefined)?.inputs;
    if (typeof inputs === 'string') return { body: vectorFor(inputs, this.options.dimensions) };
    if (!Array.isArray(inputs) || inputs.some((i) => typeof i !== 'string')) {
      return { status: 400, body: { error: `Input should be a valid string ${UPSTREAM_MARKER}` } };
    }
    return { body: (inputs as string[]).map((text) => vectorFor(text, this.options.dimensions)) };
  }

  protected models(): EmulatorReply {
    const ids = this.options.flavour === 'huggingface'
      ? this.options.chatModels
      : [...this.options.chatModels, ...(this.hasEmbeddings ? this.options.embeddingModels : [])];
    return {
      body: { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'emulator' })) },
    };
  }

  private get hasEmbeddings(): boolean {
    return this.options.flavour !== 'deepseek' && this.options.flavour !== 'xai';
  }

  private unknownModel(model: string): EmulatorReply {
    if (this.options.flavour === 'mistral') {
      return {
        status: 400,
        body: { object: 'error', message: `Invalid model: ${model} ${UPSTREAM_MARKER}`, type: 'invalid_model', param: null, code: '1500' },
      };
    }
    return {
      status: 404,
      body: openAiError(
        `The model \`${model}\` does not exist or you do not have access to it. ${UPSTREAM_MARKER}`,
        'invalid_request_error',
        'model_not_found',
      ),
    };
  }
}

function openAiError(message: string, type: string, code: string | null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

function badRequest(message: string, param: string | null, code: string | null = null): EmulatorReply {
  return { status: 400, body: openAiError(`${message} ${UPSTREAM_MARKER}`, 'invalid_request_error', code, param) };
}

function mistralExtraKey(key: string): EmulatorReply {
  return {
    status: 422,
    body: {
      object: 'error',
      message: {
        detail: [{ type: 'extra_forbidden', loc: ['body', key], msg: `Extra inputs are not permitted ${UPSTREAM_MARKER}`, input: null }],
      },
      type: 'invalid_request_error',
      param: null,
      code: null,
    },
  };
}

function rateLimitHeaders(): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': '60',
    'x-ratelimit-remaining-requests': '59',
    'x-ratelimit-reset-requests': '1s',
  };
}

/** Deterministic unit-ish vector per text, so tests can compare inputs with outputs. */
export function vectorFor(text: string, dimensions: number): number[] {
  const vector: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    let hash = 17 + i;
    for (const ch of text) hash = (hash * 31 + ch.charCodeAt(0)) % 10_007;
    // Exactly representable in float32, so base64 and float answers decode to the same numbers.
    vector.push(hash / 16_384);
  }
  return vector;
}

function toBase64(vector: number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => buffer.writeFloatLE(value, i * 4));
  return buffer.toString('base64');
}

interface EmulatedToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface ScriptedAnswer {
  text: string;
  toolCalls?: EmulatedToolCall[];
}

function validateMessages(messages: unknown[]): EmulatorReply | undefined {
  for (const [index, item] of messages.entries()) {
    const message = item as Record<string, unknown> | null;
    if (!message || typeof message.role !== 'string' || !('content' in message || 'tool_calls' in message)) {
      return badRequest("Invalid value for 'messages': each message needs a role and content.", 'messages');
    }
    if (message.role === 'tool' && typeof message.tool_call_id !== 'string') {
      return badRequest(`Missing parameter 'tool_call_id': messages[${index}] with role 'tool' must have a 'tool_call_id'.`, `messages.[${index}].tool_call_id`);
    }
    if (Array.isArray(message.content)) {
      for (const part of message.content as Array<Record<string, unknown>>) {
        if (part?.type === 'text' && typeof part.text === 'string') continue;
        const url = (part?.image_url as { url?: unknown } | undefined)?.url;
        if (part?.type !== 'image_url' || typeof url !== 'string') {
          return badRequest(`Invalid content part in messages[${index}].`, `messages.[${index}].content`);
        }
        if (!/^https?:\/\//.test(url) && !isBase64ImageUrl(url)) {
          return { status: 400, body: openAiError(`Invalid image URL. ${UPSTREAM_MARKER}`, 'invalid_request_error', 'invalid_image_url', `messages.[${index}].content`) };
        }
      }
    }
  }
  return undefined;
}

/**
 * A base64 data URL of an image type OpenAI takes. The payload is searched for a character outside the alphabet
 * rather than matched by a quantified pattern, which exhausts V8's backtracking stack on a 15 MiB image.
 */
function isBase64ImageUrl(url: string): boolean {
  const header = /^data:image\/(png|jpeg|gif|webp);base64,/.exec(url.slice(0, 40));
  if (!header) return false;
  const payload = url.slice(header[0].length);
  if (payload.length === 0 || /[^A-Za-z0-9+/=]/.test(payload)) return false;
  const padding = payload.indexOf('=');
  return padding === -1 || (padding > 0 && /^=+$/.test(payload.slice(padding)));
}

function validateTools(tools: unknown): EmulatorReply | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return badRequest("Invalid type for 'tools': expected an array.", 'tools');
  for (const [index, tool] of tools.entries()) {
    const fn = (tool as { type?: unknown; function?: { name?: unknown } } | null)?.function;
    if ((tool as { type?: unknown }).type !== 'function' || typeof fn?.name !== 'string') {
      return badRequest(`Missing required parameter: 'tools[${index}].function.name'.`, `tools[${index}].function.name`);
    }
  }
  return undefined;
}

/** What the scripted model answers: tool calls, text quoting a tool result, schema-shaped JSON, or an echo. */
function scriptedAnswer(body: Record<string, unknown>): ScriptedAnswer {
  const messages = body.messages as Array<Record<string, unknown>>;
  const last = messages.at(-1)!;
  const tools = (body.tools as Array<{ function: { name: string; parameters?: unknown } }> | undefined) ?? [];
  const choice = body.tool_choice as string | { function?: { name?: string } } | undefined;
  if (last.role === 'user' && tools.length > 0 && choice !== 'none') {
    const named = typeof choice === 'object' ? choice.function?.name : undefined;
    const called = named ? tools.filter((t) => t.function.name === named) : tools;
    return {
      text: '',
      toolCalls: called.map((tool, index) => ({
        id: `call_emulated_${index}`,
        type: 'function',
        function: { name: tool.function.name, arguments: JSON.stringify(valueFor(tool.function.parameters) ?? {}) },
      })),
    };
  }
  const format = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (format?.type === 'json_schema') return { text: JSON.stringify(valueFor(format.json_schema?.schema)) };
  if (format?.type === 'json_object') return { text: JSON.stringify({ echo: textOf(last.content) }) };
  if (last.role === 'tool') return { text: `tool said: ${textOf(last.content)}` };
  return { text: `echo: ${textOf(last.content)}` };
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return String(content);
  return content
    .map((part: { type?: string; text?: string }) => (part.type === 'text' ? part.text : '[image]'))
    .join(' ');
}

/** A value matching a simple JSON schema (objects, arrays, scalars, enums); every property is filled. */
function valueFor(schema: unknown): unknown {
  const s = (schema ?? {}) as { type?: unknown; properties?: Record<string, unknown>; items?: unknown; enum?: unknown[] };
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  switch (Array.isArray(s.type) ? s.type[0] : s.type) {
    case 'object':
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([key, value]) => [key, valueFor(value)]));
    case 'array':
      return [valueFor(s.items)];
    case 'string':
      return 'Paris';
    case 'number':
    case 'integer':
      return 21;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

/**
 * Text as word chunks; tool calls as OpenAI streams them: a first piece per call with id, name and empty
 * arguments, then the arguments in two halves, the calls' pieces interleaved by index.
 */
function streamChunks(model: string, answer: ScriptedAnswer, usage: object | undefined, finishUsage?: object): string[] {
  const base = { id: 'chatcmpl-emulated', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const delta = (d: object) => ({ ...base, choices: [{ index: 0, delta: d, finish_reason: null }] });
  const calls = answer.toolCalls ?? [];
  const pieces = calls.length > 0
    ? [
        ...calls.map((call, index) => delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] })),
        ...[0, 1].flatMap((half) =>
          calls.map((call, index) => {
            const args = call.function.arguments;
            const cut = Math.ceil(args.length / 2);
            return delta({ tool_calls: [{ index, function: { arguments: half === 0 ? args.slice(0, cut) : args.slice(cut) } }] });
          }),
        ),
      ]
    : answer.text.split(/(?<= )/).map((word) => delta({ content: word }));
  const frames = [
    delta({ role: 'assistant', content: calls.length > 0 ? null : '' }),
    ...pieces,
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }], ...(finishUsage ? { usage: finishUsage } : {}) },
    ...(usage ? [{ ...base, choices: [], usage }] : []),
  ];
  return [...frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`), 'data: [DONE]\n\n'];
}

/** The body parameters of `POST /v1/responses` (the `openai` client's ResponseCreateParams). */
const RESPONSES_KEYS = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'max_output_tokens', 'max_tool_calls',
  'temperature', 'top_p', 'top_logprobs', 'metadata', 'store', 'stream', 'stream_options', 'previous_response_id', 'conversation',
  'reasoning', 'include', 'user', 'prompt', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier', 'truncation',
  'service_tier', 'background', 'client_metadata',
]);

/** This emulator's key for sealing reasoning: only it can make an `encrypted_content` it will read back. */
const REASONING_KEY = randomBytes(32);

export function sealReasoning(thought: string): string {
  const text = Buffer.from(thought).toString('base64url');
  return `${text}.${createHmac('sha256', REASONING_KEY).update(text).digest('base64url')}`;
}

function unsealed(encrypted: string): boolean {
  const [text, mac] = encrypted.split('.');
  return mac !== undefined && createHmac('sha256', REASONING_KEY).update(text).digest('base64url') === mac;
}

function validateResponsesInput(items: Array<Record<string, unknown>>, store: boolean): EmulatorReply | undefined {
  for (const [index, item] of items.entries()) {
    const at = `input[${index}]`;
    if (!item || typeof item !== 'object') return badRequest(`Invalid type for '${at}': expected an object.`, at);
    const type = item.type ?? 'message';
    if (type === 'item_reference') return { status: 404, body: openAiError(`Item with id '${String(item.id)}' not found. ${UPSTREAM_MARKER}`, 'invalid_request_error', null, 'input') };
    if (type === 'reasoning') {
      if (typeof item.encrypted_content === 'string') {
        if (!unsealed(item.encrypted_content)) return badRequest(`The encrypted content for item ${at} could not be verified.`, `${at}.encrypted_content`, 'invalid_encrypted_content');
        continue;
      }
      const hint = store ? '' : ' Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.';
      return { status: 404, body: openAiError(`Item with id '${String(item.id)}' not found.${hint} ${UPSTREAM_MARKER}`, 'invalid_request_error', null, 'input') };
    }
    if (type === 'message' && (typeof item.role !== 'string' || item.content === undefined)) return badRequest(`Missing required parameter: '${at}.content'.`, `${at}.content`);
    if (type === 'function_call_output' && typeof item.call_id !== 'string') return badRequest(`Missing required parameter: '${at}.call_id'.`, `${at}.call_id`);
  }
  return undefined;
}

function validateResponsesTools(tools: unknown): EmulatorReply | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return badRequest("Invalid type for 'tools': expected an array.", 'tools');
  for (const [index, tool] of tools.entries()) {
    if ((tool as { type?: unknown }).type === 'function' && typeof (tool as { name?: unknown }).name !== 'string') {
      return badRequest(`Missing required parameter: 'tools[${index}].name'.`, `tools[${index}].name`);
    }
  }
  return undefined;
}

/** The chat script over Responses input: the last item decides, as the last message does on chat completions. */
function scriptedResponsesAnswer(body: Record<string, unknown>, input: Array<Record<string, unknown>>): ScriptedAnswer {
  const last = input.at(-1) ?? {};
  const tools = ((body.tools as Array<{ type: string; name: string; parameters?: unknown }> | undefined) ?? []).filter((tool) => tool.type === 'function');
  const choice = body.tool_choice as string | { name?: string } | undefined;
  const role = (last.type ?? 'message') === 'message' ? last.role : undefined;
  if (role === 'user' && tools.length > 0 && choice !== 'none') {
    const named = typeof choice === 'object' ? choice.name : undefined;
    return {
      text: '',
      toolCalls: tools
        .filter((tool) => !named || tool.name === named)
        .map((tool, index) => ({ id: `call_emulated_${index}`, type: 'function', function: { name: tool.name, arguments: JSON.stringify(valueFor(tool.parameters) ?? {}) } })),
    };
  }
  const format = (body.text as { format?: { type?: string; schema?: unknown } } | undefined)?.format;
  if (format?.type === 'json_schema') return { text: JSON.stringify(valueFor(format.schema)) };
  if (last.type === 'function_call_output') return { text: `tool said: ${itemText(last.output)}` };
  if (format?.type === 'json_object') return { text: JSON.stringify({ echo: itemText(last.content) }) };
  return { text: `echo: ${itemText(last.content)}` };
}

function itemText(content: unknown): string {
  if (!Array.isArray(content)) return String(content);
  return content.map((part: { type?: string; text?: string }) => (part.type === 'input_image' ? '[image]' : part.text)).join(' ');
}

function responseId(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

/** The output items: the reasoning first, then the message or the calls, each completed. */
function responseItems(answer: ScriptedAnswer, reasoning: string | undefined, sealed: boolean): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  if (reasoning !== undefined) items.push({ id: responseId('rs'), type: 'reasoning', summary: [], ...(sealed ? { encrypted_content: sealReasoning(reasoning) } : {}) });
  if (answer.toolCalls) {
    for (const call of answer.toolCalls) {
      items.push({ id: responseId('fc'), type: 'function_call', status: 'completed', arguments: call.function.arguments, call_id: call.id, name: call.function.name });
    }
  } else {
    items.push({ id: responseId('msg'), type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: answer.text }], role: 'assistant' });
  }
  return items;
}

/** The Response object's fields, echoing the request as OpenAI does; status, output and usage are the caller's. */
function responseObject(body: Record<string, unknown>, store: boolean): Record<string, unknown> {
  return {
    id: responseId('resp'),
    object: 'response',
    created_at: 1_700_000_000,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: (body.reasoning as { effort?: string } | undefined)?.effort ?? null, summary: null },
    store,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    user: null,
    metadata: body.metadata ?? {},
  };
}

/** One output item's events: added, its content in pieces, done. */
function itemEvents(item: Record<string, unknown>, outputIndex: number, event: (type: string, payload: object) => string): string[] {
  const at = { item_id: item.id, output_index: outputIndex };
  switch (item.type) {
    case 'reasoning': {
      const { encrypted_content: _sealed, ...added } = item;
      return [event('response.output_item.added', { output_index: outputIndex, item: added }), event('response.output_item.done', { output_index: outputIndex, item })];
    }
    case 'function_call': {
      const args = item.arguments as string;
      const cut = Math.ceil(args.length / 2);
      return [
        event('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } }),
        event('response.function_call_arguments.delta', { ...at, delta: args.slice(0, cut) }),
        event('response.function_call_arguments.delta', { ...at, delta: args.slice(cut) }),
        event('response.function_call_arguments.done', { ...at, name: item.name, arguments: args }),
        event('response.output_item.done', { output_index: outputIndex, item }),
      ];
    }
    default: {
      const text = (item.content as Array<{ text: string }>)[0].text;
      const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
      const content = { ...at, content_index: 0 };
      return [
        event('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } }),
        event('response.content_part.added', { ...content, part }),
        ...text.split(/(?<= )/).map((delta) => event('response.output_text.delta', { ...content, delta, logprobs: [] })),
        event('response.output_text.done', { ...content, text, logprobs: [] }),
        event('response.content_part.done', { ...content, part: { ...part, text } }),
        event('response.output_item.done', { output_index: outputIndex, item }),
      ];
    }
  }
}
