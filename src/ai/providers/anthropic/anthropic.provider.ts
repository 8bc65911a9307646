/**
 * Anthropic adapter: the Messages API (`POST /v1/messages`) for generation and `/v1/models` for listing.
 * Anthropic has no embeddings endpoint of its own (its documentation points to Voyage AI), so this kind
 * is generation-only and says so in its capabilities.
 */
import { isObject } from '../../../common/json-values';
import { CapabilityNotSupportedError, InvalidResponseError, TollgateError } from '../../errors';
import type {
  AiProvider,
  EmbedResult,
  GenerateRequest,
  GenerateResult,
  GenerateStreamChunk,
  HealthResult,
  ModelFeature,
  ModelInfo,
  NativeCountRequest,
  NativeDialect,
  ProviderCapabilities,
  ProviderSettings,
} from '../ai-provider.interface';
import { parseEventObject, readSseEvents } from '../../../upstream/stream-framing';
import { UpstreamClient } from '../../../upstream/upstream-client';
import { describeSettings, probeModelHealth } from '../provider-support';
import { mapAnthropicError } from './anthropic-errors';
import { toAnthropicConversation, type AnthropicMessage } from './anthropic-messages';
import { fromAnthropicMessage } from './anthropic-response';
import { toAnthropicSampling, type AnthropicSamplingFields } from './anthropic-sampling';
import { anthropicNative, forwardedHeaders, nativeChunks, nativeMessagesBody } from './anthropic-native';
import { callerRefusal } from '../caller-refusal';
import { AnthropicStreamTranslator } from './anthropic-stream';
import { jsonOutputTool, toAnthropicToolFields, type AnthropicToolFields } from './anthropic-tools';

export const ANTHROPIC_DEFAULT_URL = 'https://api.anthropic.com';
export const ANTHROPIC_DEFAULT_CHAT_MODEL = 'claude-sonnet-4-5';
/**
 * Pinned on purpose: newer version dates reject sampling parameters for some models, and a pinned date
 * keeps the wire format this adapter was written against.
 */
export const ANTHROPIC_VERSION = '2023-06-01';
/** The API requires max_tokens on every request; used when the caller gives none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 1024;
/** /v1/models pages hold at most 1000 entries; a few pages cover every account. */
const MODELS_PAGE_SIZE = 1000;
const MAX_MODEL_PAGES = 10;

export interface AnthropicMessagesBody extends AnthropicToolFields, AnthropicSamplingFields {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string;
  stream?: boolean;
}

/** Maps Tollgate's request to the Messages API body; system messages move to the top-level `system` field. */
export function toAnthropicMessagesBody(request: GenerateRequest, model: string, provider: string): AnthropicMessagesBody {
  const sampling = toAnthropicSampling(request, provider);
  return {
    model,
    max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    ...toAnthropicConversation(request.messages, provider),
    ...toAnthropicToolFields(request, provider),
    ...sampling,
  };
}

/** Claude 1, 2 and Instant ids predate tool use and image input; every Claude 3+ family has all three features. */
export const PRE_CLAUDE_3 = /^claude-(instant|1|2)(\b|[.-])/;

export class AnthropicProvider implements AiProvider {
  readonly kind = 'anthropic' as const;
  readonly capabilities: ProviderCapabilities = {
    generate: true,
    embeddings: false,
    batchEmbeddings: false,
    streaming: true,
    listModels: true,
    tools: true,
    structuredOutput: true,
    vision: true,
    documents: true,
  };
  readonly name: string;
  private readonly http: UpstreamClient;
  private readonly url: string;
  private readonly chatModel: string;

  constructor(private readonly settings: ProviderSettings) {
    if (!settings.apiKey) throw new TollgateError(`${settings.name}: an api_key is required for anthropic`);
    this.name = settings.name;
    this.url = settings.url ?? ANTHROPIC_DEFAULT_URL;
    this.chatModel = settings.chatModel ?? ANTHROPIC_DEFAULT_CHAT_MODEL;
    this.http = new UpstreamClient({
      provider: settings.name,
      baseUrl: this.url,
      headers: { 'x-api-key': settings.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
      timeoutMs: settings.timeoutMs,
      mapError: mapAnthropicError,
    });
  }

  /** Structured output rides on tool use, so all three features share the Claude 3+ boundary. */
  supportsFeature(_feature: ModelFeature, model: string | undefined): boolean {
    return !PRE_CLAUDE_3.test(model ?? this.chatModel);
  }

  /** Every model of the Messages API takes a Messages body as written (docs/decisions.md B16). */
  speaksNative(dialect: NativeDialect): boolean {
    return dialect === 'anthropic-messages';
  }

  describe(): Record<string, unknown> {
    const { url, chatModel } = this;
    return {
      ...describeSettings({ ...this.settings, url, chatModel }, this.capabilities),
      anthropicVersion: ANTHROPIC_VERSION,
    };
  }

  /** A request in Anthropic's own dialect goes as the caller wrote it (docs/decisions.md B16), its answer kept in `native`. */
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = request.model ?? this.chatModel;
    const native = anthropicNative(request);
    const body = native ? nativeMessagesBody(native, request, model, false) : toAnthropicMessagesBody(request, model, this.name);
    const response = await this.http
      .postJson('/v1/messages', body, { signal: request.signal, onSent: request.onSent, model, ...(native ? { headers: forwardedHeaders(native) } : {}) })
      .catch((error: unknown) => {
        throw native ? callerRefusal(error) : error;
      });
    if (!native) return fromAnthropicMessage(response.body, this.name, model, jsonOutputTool(request.responseFormat));
    return { ...fromAnthropicMessage(response.body, this.name, model), native: response.body as Record<string, unknown> };
  }

  /**
   * Streams the Messages API's SSE events: text and tool-call deltas, then one final chunk with stop reason and
   * usage. A native request's chunks carry every event as it arrived (nativeChunks).
   */
  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = request.model ?? this.chatModel;
    const native = anthropicNative(request);
    const body = native ? nativeMessagesBody(native, request, model, true) : { ...toAnthropicMessagesBody(request, model, this.name), stream: true };
    const response = await this.http
      .stream('POST', '/v1/messages', body, {
        signal: request.signal,
        onSent: request.onSent,
        model,
        headers: { accept: 'text/event-stream', ...(native ? forwardedHeaders(native) : {}) },
      })
      .catch((error: unknown) => {
        throw native ? callerRefusal(error) : error;
      });
    if (native) {
      yield* nativeChunks(response.body, this.name, model);
      return;
    }
    const translator = new AnthropicStreamTranslator(this.name, model, jsonOutputTool(request.responseFormat));
    for await (const event of readSseEvents(response.body)) {
      for (const chunk of translator.translate(parseEventObject(event.data, this.name))) {
        yield chunk;
        if (chunk.done) return;
      }
    }
    throw new InvalidResponseError(`${this.name}: upstream stream ended before message_stop`, { provider: this.name });
  }

  /** `POST /v1/messages/count_tokens` with the caller's body, the routed model and the caller's version and betas. */
  async countNativeTokens(request: NativeCountRequest): Promise<Record<string, unknown>> {
    const model = request.model ?? this.chatModel;
    const { native } = request;
    const response = await this.http
      .postJson('/v1/messages/count_tokens', { ...native.body, model }, { signal: request.signal, model, headers: forwardedHeaders(native) })
      .catch((error: unknown) => {
        throw callerRefusal(error);
      });
    if (!isObject(response.body) || typeof response.body.input_tokens !== 'number') {
      throw new InvalidResponseError(`${this.name}: upstream token count has no input_tokens`, { provider: this.name });
    }
    return response.body;
  }

  embed(): Promise<EmbedResult> {
    return Promise.reject(
      new CapabilityNotSupportedError(`${this.name}: anthropic does not offer embeddings`, { provider: this.name }),
    );
  }

  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    const models: ModelInfo[] = [];
    let afterId: string | undefined;
    for (let page = 0; page < MAX_MODEL_PAGES; page++) {
      const response = await this.http.getJson('/v1/models', {
        signal,
        query: { limit: String(MODELS_PAGE_SIZE), after_id: afterId },
      });
      const body = response.body;
      if (!isObject(body) || !Array.isArray(body.data)) {
        throw new InvalidResponseError(`${this.name}: upstream model list has no data`, { provider: this.name });
      }
      for (const entry of body.data) {
        if (isObject(entry) && typeof entry.id === 'string') models.push({ id: entry.id, provider: this.name });
      }
      if (body.has_more !== true || typeof body.last_id !== 'string') break;
      afterId = body.last_id;
    }
    return models;
  }

  /** Reachable and ready when `GET /v1/models/{model}` knows the configured model (aliases resolve there). */
  healthCheck(): Promise<HealthResult> {
    return probeModelHealth(this, [this.chatModel], (model) =>
      this.http.getJson(`/v1/models/${encodeURIComponent(model)}`, { model }),
    );
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
