/**
 * Anthropic adapter: the Messages API (`POST /v1/messages`) for generation and `/v1/models` for listing.
 * Anthropic has no embeddings endpoint of its own (its documentation points to Voyage AI), so this kind
 * is generation-only and says so in its capabilities.
 */
import { isObject } from '../../../common/json-values';
import {
  AuthenticationError,
  CapabilityNotSupportedError,
  InvalidRequestError,
  InvalidResponseError,
  ProviderError,
  RateLimitError,
  TollgateError,
} from '../../errors';
import type {
  AiProvider,
  EmbedResult,
  GenerateRequest,
  GenerateResult,
  GenerateStreamChunk,
  HealthResult,
  ModelInfo,
  ProviderCapabilities,
  ProviderSettings,
} from '../ai-provider.interface';
import { parseEventObject, readSseEvents } from '../../../upstream/stream-framing';
import { UpstreamClient } from '../../../upstream/upstream-client';
import { modelNotAvailable, retryAfterFromHeaders } from '../../../upstream/upstream-errors';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';
import { NO_MODEL_FEATURES, describeSettings, probeModelHealth, textOnlyMessages, usageOf, type TextMessage } from '../provider-support';

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

interface AnthropicMessagesBody {
  model: string;
  max_tokens: number;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  system?: string;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream?: boolean;
}

/** Maps Tollgate's request to the Messages API body; system messages move to the top-level `system` field. */
function toAnthropicMessagesBody(request: GenerateRequest, model: string, provider: string): AnthropicMessagesBody {
  const sent = textOnlyMessages(request.messages, provider);
  const system = sent.filter((m) => m.role === 'system').map((m) => m.content);
  const messages = sent
    .filter((m): m is TextMessage & { role: 'user' | 'assistant' } => m.role !== 'system')
    .map((m) => ({ role: m.role, content: m.content }));
  if (messages.length === 0) {
    throw new InvalidRequestError(`${provider}: at least one user or assistant message is required`, { provider });
  }
  const body: AnthropicMessagesBody = {
    model,
    max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    messages,
  };
  if (system.length > 0) body.system = system.join('\n\n');
  // Sampling parameters are sent only when given: the API's defaults apply otherwise.
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) body.stop_sequences = request.stop;
  return body;
}

/** The Messages API reports input and output tokens; the total is their sum. */
const USAGE_FIELDS = { input: 'input_tokens', output: 'output_tokens' };

/** Reads a Messages API response; text blocks are concatenated, other block kinds ignored. */
function fromAnthropicMessage(body: unknown, provider: string, requestedModel: string): GenerateResult {
  if (!isObject(body) || !Array.isArray(body.content)) {
    throw new InvalidResponseError(`${provider}: upstream response has no content blocks`, { provider });
  }
  let text = '';
  for (const block of body.content) {
    if (isObject(block) && block.type === 'text') {
      if (typeof block.text !== 'string') {
        throw new InvalidResponseError(`${provider}: upstream text block has no text`, { provider });
      }
      text += block.text;
    }
  }
  return {
    text,
    model: typeof body.model === 'string' ? body.model : requestedModel,
    finishReason: typeof body.stop_reason === 'string' ? body.stop_reason : undefined,
    usage: usageOf(body.usage, USAGE_FIELDS),
  };
}

/** Anthropic's own error `type` (validated as a plain token so nothing else of the body leaks). */
function anthropicErrorType(body: unknown): string | undefined {
  if (!isObject(body) || !isObject(body.error)) return undefined;
  const type = body.error.type;
  return typeof type === 'string' && /^[a-z_]{1,64}$/.test(type) ? type : undefined;
}

/** Status and `error.type` -> Tollgate error. */
function mapAnthropicError(response: UpstreamErrorResponse): TollgateError {
  const { provider, status, headers, model } = response;
  const type = anthropicErrorType(response.body);
  const label = type ? `${status} ${type}` : `${status}`;
  if (status === 401 || status === 403 || type === 'authentication_error' || type === 'permission_error') {
    return new AuthenticationError(`${provider}: upstream rejected the credentials (${label})`, { provider });
  }
  if (status === 429 || type === 'rate_limit_error') {
    return new RateLimitError(`${provider}: upstream rate limit reached (${label})`, {
      provider,
      retryAfterMs: retryAfterFromHeaders(headers),
    });
  }
  if ((status === 404 || type === 'not_found_error') && model !== undefined) {
    return modelNotAvailable(provider, model, status);
  }
  // 529 overloaded_error and 500 api_error are provider-side; 400/413 are requests it refused.
  return new ProviderError(`${provider}: upstream returned ${label}`, { provider, status });
}

export class AnthropicProvider implements AiProvider {
  readonly kind = 'anthropic' as const;
  readonly capabilities: ProviderCapabilities = {
    generate: true,
    embeddings: false,
    batchEmbeddings: false,
    streaming: true,
    listModels: true,
    ...NO_MODEL_FEATURES,
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

  describe(): Record<string, unknown> {
    const { url, chatModel } = this;
    return {
      ...describeSettings({ ...this.settings, url, chatModel }, this.capabilities),
      anthropicVersion: ANTHROPIC_VERSION,
    };
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = request.model ?? this.chatModel;
    const response = await this.http.postJson('/v1/messages', toAnthropicMessagesBody(request, model, this.name), {
      signal: request.signal,
      model,
    });
    return fromAnthropicMessage(response.body, this.name, model);
  }

  /** Streams the Messages API's SSE events: text deltas, then one final chunk with stop reason and usage. */
  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = request.model ?? this.chatModel;
    const body = { ...toAnthropicMessagesBody(request, model, this.name), stream: true };
    const response = await this.http.stream('POST', '/v1/messages', body, {
      signal: request.signal,
      model,
      headers: { accept: 'text/event-stream' },
    });
    let answeredModel = model;
    let finishReason: string | undefined;
    let inputTokens: number | undefined;
    let outputTokens: number | undefined;
    for await (const event of readSseEvents(response.body)) {
      const data = parseEventObject(event.data, this.name);
      switch (data.type) {
        case 'message_start':
          if (isObject(data.message)) {
            if (typeof data.message.model === 'string') answeredModel = data.message.model;
            inputTokens = usageOf(data.message.usage, USAGE_FIELDS)?.inputTokens ?? inputTokens;
          }
          break;
        case 'content_block_delta':
          if (isObject(data.delta) && data.delta.type === 'text_delta' && typeof data.delta.text === 'string') {
            yield { done: false, text: data.delta.text };
          }
          break;
        case 'message_delta':
          if (isObject(data.delta) && typeof data.delta.stop_reason === 'string') finishReason = data.delta.stop_reason;
          outputTokens = usageOf(data.usage, USAGE_FIELDS)?.outputTokens ?? outputTokens;
          break;
        case 'message_stop':
          yield {
            done: true,
            model: answeredModel,
            finishReason,
            usage: usageOf({ input_tokens: inputTokens, output_tokens: outputTokens }, USAGE_FIELDS),
          };
          return;
        case 'error':
          // A failure after the 200 arrives as an event; it carries the same error shape as a status answer.
          throw mapAnthropicError({
            provider: this.name,
            status: anthropicErrorType(data) === 'overloaded_error' ? 529 : 500,
            headers: {},
            body: data,
            model,
          });
        default:
          break; // ping, content_block_start/stop and future event types carry no text.
      }
    }
    throw new InvalidResponseError(`${this.name}: upstream stream ended before message_stop`, { provider: this.name });
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
