/**
 * The OpenAI chat-completions wire format, shared by openai, mistral, deepseek, xai, huggingface (router) and
 * openai_compatible. Each kind supplies a dialect (defaults, the max-tokens key, embedding support, error
 * refinements); everything else about the wire format lives here once. A kind that serves the Responses API
 * (openai, Azure's v1 API) sends a request written in that dialect to `/responses` as written instead
 * (openai-responses-native.ts).
 */
import {
  AuthenticationError,
  CapabilityNotSupportedError,
  InvalidRequestError,
  InvalidResponseError,
  ProviderError,
  TollgateError,
} from '../../errors';
import type {
  AiProvider,
  EmbedRequest,
  EmbedResult,
  GenerateRequest,
  GenerateResult,
  GenerateStreamChunk,
  HealthResult,
  ModelFeature,
  ModelInfo,
  NativeDialect,
  NativeEvent,
  NativeRequest,
  ProviderCapabilities,
  ProviderKind,
  ProviderSettings,
  TokenUsage,
  ToolCallDelta,
} from '../ai-provider.interface';
import { parseEventObject, readSseEventBatches, readSseEvents } from '../../../upstream/stream-framing';
import { UpstreamClient } from '../../../upstream/upstream-client';
import { modelNotAvailable } from '../../../upstream/upstream-errors';
import type { UpstreamErrorMapper, UpstreamErrorResponse } from '../../../upstream/upstream-types';
import { checkHealth, describeSettings, validateEmbeddings } from '../provider-support';
import { callerRefusal } from '../caller-refusal';
import { hasImagePart, toOpenAiMessages } from './convert-messages';
import { generatedToolCallId, parseToolCallDeltas, parseToolCalls } from './convert-tool-calls';
import { toOpenAiResponseFormat, toOpenAiToolChoice, toOpenAiTools } from './convert-tools';
import { parseUsage } from './convert-usage';
import { mapFinishReason } from './map-finish-reason';
import { fromResponsesBody, nativeResponsesBody, ResponsesEventReader, responsesNative } from './openai-responses-native';

export interface OpenAiDialect {
  kind: ProviderKind;
  /** Undefined when the kind has no sensible default (openai_compatible). */
  defaultUrl?: string;
  defaultChatModel?: string;
  defaultEmbeddingModel?: string;
  /** Whether the kind has an embeddings endpoint at all. */
  embeddings: boolean;
  /** OpenAI's reasoning models only take max_completion_tokens; strict servers (Mistral) only max_tokens. */
  maxTokensKey: 'max_tokens' | 'max_completion_tokens';
  /** `encoding_format` sent on embeddings; undefined omits the key for servers that reject it. */
  embeddingEncoding?: 'float' | 'base64';
  /** Mistral names the sampling seed `random_seed` and refuses `seed`. */
  seedKey: 'seed' | 'random_seed';
  /** Whether to ask for a usage chunk with `stream_options`; Mistral refuses the key and sends usage anyway. */
  streamUsageOption: boolean;
  /** Whether /models lists embedding models too, so health can require the embedding model. */
  listsEmbeddingModels: boolean;
  /** Kind-specific error reading, tried before the shared OpenAI-body reading. */
  refineError?: UpstreamErrorMapper;
  /** Tools and structured output (json_object at least), as the kind documents them. */
  tools: boolean;
  structuredOutput: boolean;
  /** Whether `response_format: json_schema` is taken too; DeepSeek only takes json_object. */
  jsonSchema: boolean;
  /** Whether a chat model takes image parts; vision differs by model family. */
  vision: (model: string) => boolean;
  /** Headers carrying the credential; default `Authorization: Bearer <api key>`. */
  authHeaders?: (settings: ProviderSettings) => Record<string, string> | undefined;
  /** Whether the kind serves OpenAI's Responses API, so a Responses request goes to it as written (docs/decisions.md B19). */
  responsesApi?: boolean;
}

export type Operation = 'chat' | 'responses' | 'embeddings' | 'models';

/** A credential fetched per call (Azure's Entra tokens), dropped when the upstream answers 401. */
export interface CallCredentials {
  authorization(): Promise<Record<string, string>>;
  forget(): void;
}

/** Where one operation is sent: a path under the base URL, and a query string when the API wants one. */
export interface OperationRoute {
  path: string;
  query?: Record<string, string>;
}

/** Resolved settings every OpenAI-style adapter works from; the key is not kept (it lives in the auth header). */
export type ResolvedSettings = Omit<ProviderSettings, 'apiKey'> & { url: string };

interface ChatCompletion {
  model?: unknown;
  choices?: unknown;
  usage?: unknown;
}

export class OpenAiCompatibleChatProvider implements AiProvider {
  readonly name: string;
  readonly kind: ProviderKind;
  readonly capabilities: ProviderCapabilities;
  protected readonly settings: ResolvedSettings;
  protected readonly http: UpstreamClient;

  constructor(
    settings: ProviderSettings,
    protected readonly dialect: OpenAiDialect,
  ) {
    const url = settings.url ?? dialect.defaultUrl;
    if (!url) throw new TollgateError(`${settings.name}: a url is required for kind ${dialect.kind}`);
    const { apiKey, ...rest } = settings;
    this.settings = {
      ...rest,
      url,
      chatModel: settings.chatModel ?? dialect.defaultChatModel,
      embeddingModel: dialect.embeddings ? (settings.embeddingModel ?? dialect.defaultEmbeddingModel) : undefined,
    };
    this.name = settings.name;
    this.kind = dialect.kind;
    this.capabilities = {
      generate: true,
      embeddings: dialect.embeddings,
      batchEmbeddings: dialect.embeddings,
      streaming: true,
      listModels: true,
      tools: dialect.tools,
      structuredOutput: dialect.structuredOutput,
      vision: this.settings.chatModel !== undefined && dialect.vision(this.settings.chatModel),
    };
    this.http = new UpstreamClient({
      provider: settings.name,
      baseUrl: this.chatBaseUrl(url),
      timeoutMs: settings.timeoutMs,
      headers: dialect.authHeaders ? dialect.authHeaders(settings) : apiKey ? { authorization: `Bearer ${apiKey}` } : undefined,
      mapError: (response) => {
        if (response.status === 401) this.callCredentials()?.forget();
        return dialect.refineError?.(response) ?? refineOpenAiError(response);
      },
    });
  }

  /** Credentials fetched per call; none by default: the key is among the client's fixed headers. */
  protected callCredentials(): CallCredentials | undefined {
    return undefined;
  }

  private async callHeaders(extra?: Record<string, string>): Promise<Record<string, string> | undefined> {
    const credentials = this.callCredentials();
    return credentials ? { ...(await credentials.authorization()), ...extra } : extra;
  }

  supportsFeature(feature: ModelFeature, model: string | undefined): boolean {
    if (feature !== 'vision') return this.capabilities[feature] === true;
    const chosen = model ?? this.settings.chatModel;
    return chosen !== undefined && this.dialect.vision(chosen);
  }

  describe(): Record<string, unknown> {
    return describeSettings(this.settings, this.capabilities);
  }

  /** A request in the Responses dialect goes as the caller wrote it where the kind serves that API (docs/decisions.md B19). */
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = this.chatModel(request);
    const native = this.nativeOf(request);
    if (native) {
      const route = this.route('responses', model);
      const response = await this.http
        .postJson(route.path, nativeResponsesBody(native, request, this.upstreamModel(model), false), {
          signal: request.signal,
          onSent: request.onSent,
          model,
          query: route.query,
          headers: await this.callHeaders(),
        })
        .catch((error: unknown) => {
          throw callerRefusal(error);
        });
      return fromResponsesBody(response.body, this.name, model);
    }
    const route = this.route('chat', model);
    const response = await this.http.postJson<ChatCompletion>(route.path, this.chatBody(request, model, false), {
      signal: request.signal,
      onSent: request.onSent,
      model,
      query: route.query,
      headers: await this.callHeaders(),
    });
    return this.parseCompletion(response.body, model);
  }

  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = this.chatModel(request);
    const native = this.nativeOf(request);
    if (native) {
      yield* this.streamResponse(native, request, model);
      return;
    }
    const body = this.chatBody(request, model, true);
    if (this.dialect.streamUsageOption) body.stream_options = { include_usage: true };
    const route = this.route('chat', model);
    const response = await this.http.stream('POST', route.path, body, {
      signal: request.signal,
      onSent: request.onSent,
      model,
      query: route.query,
      headers: await this.callHeaders({ accept: 'text/event-stream' }),
    });
    let finishReason: string | undefined;
    let usage: TokenUsage | undefined;
    // Servers that send tool calls without ids (some OpenAI-compatible ones) get one made per index.
    const idsSent = new Set<number>();
    let answeredModel = model;
    for await (const event of readSseEvents(response.body, this.name)) {
      if (event.data === '[DONE]') {
        yield { done: true, model: answeredModel, finishReason, usage };
        return;
      }
      const chunk = this.parseJsonChunk(event.data);
      // OpenAI reports failures after the 200 as an `error` frame; its text stays upstream.
      if (chunk.error !== undefined && chunk.error !== null) {
        throw new ProviderError(`${this.name}: upstream reported an error mid-stream`, { provider: this.name });
      }
      // Azure's first chunk (its prompt filter results) names no model: an empty one is not an answer.
      if (typeof chunk.model === 'string' && chunk.model !== '') answeredModel = chunk.model;
      if (chunk.usage !== undefined && chunk.usage !== null) usage = parseUsage(chunk.usage);
      const choice = Array.isArray(chunk.choices) ? (chunk.choices[0] as Record<string, unknown> | undefined) : undefined;
      if (!choice) continue;
      finishReason = mapFinishReason(choice.finish_reason) ?? finishReason;
      const delta = choice.delta as { content?: unknown; tool_calls?: unknown } | undefined;
      const text = delta ? contentText(delta.content) : undefined;
      const toolCalls = delta ? parseToolCallDeltas(delta.tool_calls) : undefined;
      if (toolCalls === 'invalid') throw this.invalid('upstream stream chunk has a malformed tool_calls list');
      if (toolCalls) for (const call of toolCalls) this.ensureDeltaId(call, idsSent);
      if (text || toolCalls) yield { done: false, text: text ?? '', ...(toolCalls ? { toolCalls } : {}) };
    }
    throw new InvalidResponseError(`${this.name}: upstream stream ended without a completion marker`, {
      provider: this.name,
    });
  }

  /**
   * The upstream's Responses events as they arrived, each riding on the chunk of the first event after it that the
   * domain reads, within what one read of the body completed; the events of a read that mean nothing to the domain
   * (the Response snapshots, item and part openings, the `.done` repetitions) go on one chunk of empty text at its
   * end. So a read is relayed in as few steps as it holds answer pieces, and no event waits for a later read. The
   * events parsed here carry their parse on (`parsed`), for the surface's echo of the final Response.
   */
  private async *streamResponse(native: NativeRequest, request: GenerateRequest, model: string): AsyncIterable<GenerateStreamChunk> {
    const route = this.route('responses', model);
    const response = await this.http
      .stream('POST', route.path, nativeResponsesBody(native, request, this.upstreamModel(model), true), {
        signal: request.signal,
        onSent: request.onSent,
        model,
        query: route.query,
        headers: await this.callHeaders({ accept: 'text/event-stream' }),
      })
      .catch((error: unknown) => {
        throw callerRefusal(error);
      });
    const reader = new ResponsesEventReader(this.name, model);
    for await (const batch of readSseEventBatches(response.body, this.name)) {
      let arrived: NativeEvent[] = [];
      for (const event of batch) {
        let chunk: GenerateStreamChunk | undefined;
        try {
          const data = event.event === undefined || ResponsesEventReader.READ.has(event.event) ? parseEventObject(event.data, this.name) : undefined;
          const type = event.event ?? String(data?.type);
          chunk = data && reader.read(type, data);
          arrived.push(data ? { event: type, data: event.data, parsed: data } : { event: type, data: event.data });
        } catch (error) {
          // A failure event (or an unreadable one) ends the stream after everything that came before it, without it.
          if (arrived.length > 0) yield { done: false, text: '', native: arrived };
          throw error;
        }
        if (!chunk) continue;
        chunk.native = arrived;
        arrived = [];
        yield chunk;
        if (chunk.done) return;
      }
      if (arrived.length > 0) yield { done: false, text: '', native: arrived };
    }
    throw new InvalidResponseError(`${this.name}: upstream stream ended before response.completed`, { provider: this.name });
  }

  async embed(request: EmbedRequest): Promise<EmbedResult> {
    const model = this.embeddingModel(request);
    const body: Record<string, unknown> = { model: this.upstreamModel(model), input: request.inputs };
    if (this.dialect.embeddingEncoding) body.encoding_format = this.dialect.embeddingEncoding;
    const route = this.route('embeddings', model);
    const response = await this.http.postJson<{ data?: unknown; model?: unknown; usage?: unknown }>(route.path, body, {
      signal: request.signal,
      onSent: request.onSent,
      model,
      query: route.query,
      headers: await this.callHeaders(),
    });
    const data = response.body?.data;
    if (!Array.isArray(data)) throw this.invalid('embeddings response has no data list');
    const ordered = [...data].sort((a, b) => indexOf(a) - indexOf(b));
    const vectors = ordered.map((item) => decodeEmbedding((item as { embedding?: unknown })?.embedding));
    const usage = parseUsage(response.body.usage);
    return {
      embeddings: validateEmbeddings(vectors, request.inputs.length, this.settings.embeddingDimensions, this.name),
      model: typeof response.body.model === 'string' ? response.body.model : model,
      ...(usage ? { usage } : {}),
    };
  }

  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    const route = this.route('models');
    const response = await this.http.getJson<{ data?: unknown }>(route.path, { signal, query: route.query, headers: await this.callHeaders() });
    const data = response.body?.data;
    if (!Array.isArray(data)) throw this.invalid('model list has no data list');
    return data.map((item) => {
      const id = (item as { id?: unknown })?.id;
      if (typeof id !== 'string') throw this.invalid('model list entry has no id');
      const ownedBy = (item as { owned_by?: unknown }).owned_by;
      return { id, provider: this.name, ...(typeof ownedBy === 'string' ? { ownedBy } : {}) };
    });
  }

  /** Ready means the chat model is listed, plus the embedding model where /models lists those too. */
  healthCheck(): Promise<HealthResult> {
    const { chatModel, embeddingModel } = this.settings;
    const required = this.dialect.listsEmbeddingModels || !chatModel ? [chatModel, embeddingModel] : [chatModel];
    return checkHealth(this, required.filter((m): m is string => m !== undefined));
  }

  close(): Promise<void> {
    return this.http.close();
  }

  /** Where /chat/completions and /models live; huggingface derives it from the router root. */
  protected chatBaseUrl(url: string): string {
    return url;
  }

  /** The Responses dialect where this registration sends Responses requests as written (docs/decisions.md B19). */
  speaksNative(dialect: NativeDialect): boolean {
    return dialect === 'openai-responses' && this.takesResponses();
  }

  /** Whether a Responses request is sent to this registration as written; Azure's deployment-style API has no such route. */
  protected takesResponses(): boolean {
    return this.dialect.responsesApi === true;
  }

  /** The path (and query) of an operation; `model` is the model the caller asked for. */
  protected route(operation: Operation, _model?: string): OperationRoute {
    return { path: operation === 'chat' ? '/chat/completions' : `/${operation}` };
  }

  /** The name the upstream knows `model` by in the request body (Azure's deployment names). */
  protected upstreamModel(model: string): string {
    return model;
  }

  protected chatModel(request: GenerateRequest): string {
    const model = request.model ?? this.settings.chatModel;
    if (!model) throw new InvalidRequestError(`${this.name}: no chat model configured or given`);
    return model;
  }

  protected embeddingModel(request: EmbedRequest): string {
    if (!this.dialect.embeddings) {
      throw new CapabilityNotSupportedError(`${this.name}: ${this.kind} does not support embeddings`, {
        provider: this.name,
      });
    }
    if (request.inputs.length === 0) throw new InvalidRequestError(`${this.name}: no inputs to embed`);
    const model = request.model ?? this.settings.embeddingModel;
    if (!model) throw new InvalidRequestError(`${this.name}: no embedding model configured or given`);
    return model;
  }

  private nativeOf(request: GenerateRequest): NativeRequest | undefined {
    return this.takesResponses() ? responsesNative(request) : undefined;
  }

  protected invalid(what: string): InvalidResponseError {
    return new InvalidResponseError(`${this.name}: ${what}`, { provider: this.name });
  }

  /** Only keys the caller set, so strict servers never see a key they do not document. */
  private chatBody(request: GenerateRequest, model: string, stream: boolean): Record<string, unknown> {
    if (!Array.isArray(request.messages) || request.messages.length === 0) {
      throw new InvalidRequestError(`${this.name}: at least one message is required`);
    }
    this.refuseUnsupported(request, model);
    const body: Record<string, unknown> = {
      model: this.upstreamModel(model),
      messages: toOpenAiMessages(request.messages),
      stream,
    };
    if (request.maxTokens !== undefined) body[this.dialect.maxTokensKey] = request.maxTokens;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.topP !== undefined) body.top_p = request.topP;
    if (request.stop !== undefined && request.stop.length > 0) body.stop = request.stop;
    if (request.tools !== undefined && request.tools.length > 0) body.tools = toOpenAiTools(request.tools);
    if (request.toolChoice !== undefined) body.tool_choice = toOpenAiToolChoice(request.toolChoice);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
    if (request.responseFormat !== undefined) body.response_format = toOpenAiResponseFormat(request.responseFormat);
    if (request.seed !== undefined) body[this.dialect.seedKey] = request.seed;
    if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
    if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
    return body;
  }

  /**
   * The client refuses by capability before this point; these checks catch what capabilities cannot say
   * (json_schema on a json_object-only kind) and keep a direct caller from sending what the kind refuses.
   */
  private refuseUnsupported(request: GenerateRequest, model: string): void {
    const refuse = (what: string) =>
      new CapabilityNotSupportedError(`${this.name}: ${this.kind} does not support ${what}`, { provider: this.name });
    const usesTools = (request.tools?.length ?? 0) > 0 || request.messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.toolCalls?.length));
    if (usesTools && !this.dialect.tools) throw refuse('tools');
    const format = request.responseFormat?.type;
    if ((format === 'json_object' || format === 'json_schema') && !this.dialect.structuredOutput) throw refuse('response_format');
    if (format === 'json_schema' && !this.dialect.jsonSchema) throw refuse('response_format json_schema');
    if (hasImagePart(request.messages) && !this.dialect.vision(model)) throw refuse(`image input with model ${model}`);
    if (request.topK !== undefined && !request.topKOptional) {
      throw new InvalidRequestError(`${this.name}: ${this.kind} does not support top_k`, { provider: this.name, param: 'top_k' });
    }
  }

  private ensureDeltaId(call: ToolCallDelta, idsSent: Set<number>): void {
    if (idsSent.has(call.index)) return;
    idsSent.add(call.index);
    call.id ??= generatedToolCallId();
  }

  private parseCompletion(body: ChatCompletion, model: string): GenerateResult {
    const choice = Array.isArray(body?.choices) ? (body.choices[0] as Record<string, unknown> | undefined) : undefined;
    // A completion cut by a content filter may carry no message content at all (Azure OpenAI's documented answer).
    const filtered = choice?.finish_reason === 'content_filter';
    const message = (choice?.message ?? (filtered ? {} : undefined)) as { content?: unknown; tool_calls?: unknown } | undefined;
    if (!message || typeof message !== 'object') throw this.invalid('completion has no message');
    const text = filtered && message.content === undefined ? '' : contentText(message.content);
    if (text === undefined) throw this.invalid('completion message has no text content');
    const toolCalls = parseToolCalls(message.tool_calls);
    if (toolCalls === 'invalid') throw this.invalid('completion message has a malformed tool_calls list');
    const usage = parseUsage(body.usage);
    const finishReason = mapFinishReason(choice?.finish_reason);
    return {
      text,
      model: typeof body.model === 'string' ? body.model : model,
      ...(finishReason ? { finishReason } : {}),
      ...(usage ? { usage } : {}),
      ...(toolCalls ? { toolCalls } : {}),
    };
  }

  private parseJsonChunk(data: string): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(data);
      if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
    } catch {
      // Falls through to the shape error below; the parser's message is never surfaced.
    }
    throw this.invalid('upstream stream chunk is not a JSON object');
  }
}

/**
 * Text of a message: a string, null (no text, e.g. a length-cut reasoning answer), or Mistral's list of
 * typed parts. Undefined means the shape is not one we know.
 */
function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (content === null) return '';
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && typeof part.text === 'string' ? part.text : ''))
      .join('');
  }
  return undefined;
}

function indexOf(item: unknown): number {
  const index = (item as { index?: unknown })?.index;
  return typeof index === 'number' ? index : 0;
}

/** A float array, or OpenAI's base64 of little-endian float32 values. */
export function decodeEmbedding(embedding: unknown): unknown {
  if (typeof embedding !== 'string') return embedding;
  const bytes = Buffer.from(embedding, 'base64');
  if (bytes.length % 4 !== 0) return undefined;
  const values: number[] = new Array(bytes.length / 4);
  for (let i = 0; i < values.length; i++) values[i] = bytes.readFloatLE(i * 4);
  return values;
}

/**
 * Reads the codes of an OpenAI-style error body (`{"error":{"type","code"}}`, or Mistral's top-level
 * `type`/`code`) to pick a class more precise than the status alone; the text itself is never used.
 */
export function refineOpenAiError(response: UpstreamErrorResponse): TollgateError | undefined {
  const body = response.body as Record<string, unknown> | undefined;
  const inner = body && typeof body.error === 'object' && body.error !== null ? (body.error as Record<string, unknown>) : body;
  const code = typeof inner?.code === 'string' ? inner.code : undefined;
  const type = typeof inner?.type === 'string' ? inner.type : undefined;
  if (code === 'model_not_found' || type === 'invalid_model') {
    return modelNotAvailable(response.provider, response.model, response.status);
  }
  if (code === 'invalid_api_key' || type === 'authentication_error') {
    return new AuthenticationError(`${response.provider}: upstream rejected the credentials (${response.status})`, {
      provider: response.provider,
    });
  }
  return undefined;
}
