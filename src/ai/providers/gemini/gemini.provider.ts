/**
 * Gemini adapter (Generative Language API, v1beta): `models/{model}:generateContent` for generation,
 * `models/{model}:batchEmbedContents` for one or many embeddings in a single call (as the official SDK
 * does), `models` for listing. The key travels in `x-goog-api-key`, never in the query string.
 */
import { isObject, numberOrUndefined } from '../../../common/json-values';
import {
  AuthenticationError,
  InvalidRequestError,
  InvalidResponseError,
  ProviderError,
  RateLimitError,
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
  ModelInfo,
  ProviderCapabilities,
  ProviderSettings,
} from '../ai-provider.interface';
import { parseEventObject, readSseEvents } from '../../../upstream/stream-framing';
import { UpstreamClient } from '../../../upstream/upstream-client';
import { modelNotAvailable, retryAfterFromHeaders } from '../../../upstream/upstream-errors';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';
import {
  NO_MODEL_FEATURES,
  checkEmbeddingDimensions,
  describeSettings,
  probeModelHealth,
  textOnlyMessages,
  usageOf,
  validateEmbeddings,
} from '../provider-support';

export const GEMINI_DEFAULT_URL = 'https://generativelanguage.googleapis.com/v1beta';
export const GEMINI_DEFAULT_CHAT_MODEL = 'gemini-2.5-flash';
export const GEMINI_DEFAULT_EMBEDDING_MODEL = 'gemini-embedding-001';
const MODELS_PAGE_SIZE = 1000;
const MAX_MODEL_PAGES = 10;

interface GeminiContent {
  role?: 'user' | 'model';
  parts: Array<{ text: string }>;
}

interface GeminiGenerateBody {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    topP?: number;
    stopSequences?: string[];
  };
}

/** Accepts `gemini-x` or `models/gemini-x`; paths and bodies use the bare id. */
function bareModel(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}

/** System messages become `systemInstruction`; assistant turns are Gemini's `model` role. */
function toGeminiGenerateBody(request: GenerateRequest, provider: string): GeminiGenerateBody {
  const sent = textOnlyMessages(request.messages, provider);
  const system = sent.filter((m) => m.role === 'system').map((m) => m.content);
  const contents: GeminiContent[] = sent
    .filter((m) => m.role !== 'system')
    .map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] }));
  if (contents.length === 0) {
    throw new InvalidRequestError(`${provider}: at least one user or assistant message is required`, { provider });
  }
  const body: GeminiGenerateBody = { contents };
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  const config: NonNullable<GeminiGenerateBody['generationConfig']> = {};
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) config.stopSequences = request.stop;
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

/** Reads the first candidate's text parts; a prompt blocked before any candidate is a refused request. */
function fromGeminiResponse(body: unknown, provider: string, requestedModel: string): GenerateResult {
  if (!isObject(body)) throw new InvalidResponseError(`${provider}: upstream response is not an object`, { provider });
  const candidates = body.candidates;
  if (candidates === undefined && isObject(body.promptFeedback)) {
    const reason = enumToken(body.promptFeedback.blockReason) ?? 'BLOCKED';
    throw new ProviderError(`${provider}: upstream blocked the prompt (${reason})`, { provider, status: 400 });
  }
  if (!Array.isArray(candidates) || candidates.length === 0 || !isObject(candidates[0])) {
    throw new InvalidResponseError(`${provider}: upstream response has no candidates`, { provider });
  }
  const candidate = candidates[0];
  let text = '';
  // A candidate stopped by a safety filter or a zero token budget can legitimately carry no content, or a
  // content with only its role (a thinking model out of tokens, a streamed last event): a finished candidate
  // may lack parts, an unfinished one may not.
  if (candidate.content !== undefined) {
    const { parts } = isObject(candidate.content) ? candidate.content : { parts: null };
    if (!(Array.isArray(parts) || (parts === undefined && candidate.finishReason !== undefined))) {
      throw new InvalidResponseError(`${provider}: upstream candidate has no parts`, { provider });
    }
    for (const part of parts ?? []) {
      // Thought summaries are not part of the answer.
      if (isObject(part) && typeof part.text === 'string' && part.thought !== true) text += part.text;
    }
  }
  return {
    text,
    model: typeof body.modelVersion === 'string' ? body.modelVersion : requestedModel,
    finishReason: enumToken(candidate.finishReason),
    usage: usageOf(body.usageMetadata, USAGE_FIELDS),
  };
}

const USAGE_FIELDS = { input: 'promptTokenCount', output: 'candidatesTokenCount', total: 'totalTokenCount' };

/** Gemini's `{"error":{"code","message","status","details"}}`: only `status` and detail reasons are read. */
function errorFields(body: unknown): { status?: string; reasons: string[]; retryDelayMs?: number } {
  const reasons: string[] = [];
  if (!isObject(body) || !isObject(body.error)) return { reasons };
  let retryDelayMs: number | undefined;
  if (Array.isArray(body.error.details)) {
    for (const detail of body.error.details) {
      if (!isObject(detail)) continue;
      const reason = enumToken(detail.reason);
      if (reason) reasons.push(reason);
      // google.rpc.RetryInfo carries the wait as a protobuf Duration string such as "37s" or "0.5s".
      if (typeof detail.retryDelay === 'string' && /^\d+(\.\d+)?s$/.test(detail.retryDelay)) {
        retryDelayMs = Math.ceil(Number(detail.retryDelay.slice(0, -1)) * 1000);
      }
    }
  }
  return { status: enumToken(body.error.status), reasons, retryDelayMs };
}

/** A wrong key is a 400 with reason API_KEY_INVALID here, not a 401. */
function mapGeminiError(response: UpstreamErrorResponse): TollgateError {
  const { provider, status, headers, model } = response;
  const fields = errorFields(response.body);
  const label = fields.status ? `${status} ${fields.status}` : `${status}`;
  if (
    status === 401 ||
    status === 403 ||
    fields.reasons.includes('API_KEY_INVALID') ||
    fields.status === 'UNAUTHENTICATED' ||
    fields.status === 'PERMISSION_DENIED'
  ) {
    return new AuthenticationError(`${provider}: upstream rejected the credentials (${label})`, { provider });
  }
  if (status === 429 || fields.status === 'RESOURCE_EXHAUSTED') {
    return new RateLimitError(`${provider}: upstream rate limit reached (${label})`, {
      provider,
      retryAfterMs: retryAfterFromHeaders(headers) ?? fields.retryDelayMs,
    });
  }
  if ((status === 404 || fields.status === 'NOT_FOUND') && model !== undefined) {
    return modelNotAvailable(provider, model, status);
  }
  return new ProviderError(`${provider}: upstream returned ${label}`, { provider, status });
}

export class GeminiProvider implements AiProvider {
  readonly kind = 'gemini' as const;
  readonly capabilities: ProviderCapabilities = {
    generate: true,
    embeddings: true,
    batchEmbeddings: true,
    streaming: true,
    listModels: true,
    ...NO_MODEL_FEATURES,
  };
  readonly name: string;
  private readonly http: UpstreamClient;
  private readonly url: string;
  private readonly chatModel: string;
  private readonly embeddingModel: string;

  constructor(private readonly settings: ProviderSettings) {
    if (!settings.apiKey) throw new TollgateError(`${settings.name}: an api_key is required for gemini`);
    this.name = settings.name;
    checkEmbeddingDimensions(settings);
    this.url = settings.url ?? GEMINI_DEFAULT_URL;
    this.chatModel = bareModel(settings.chatModel ?? GEMINI_DEFAULT_CHAT_MODEL);
    this.embeddingModel = bareModel(settings.embeddingModel ?? GEMINI_DEFAULT_EMBEDDING_MODEL);
    this.http = new UpstreamClient({
      provider: settings.name,
      baseUrl: this.url,
      headers: { 'x-goog-api-key': settings.apiKey },
      timeoutMs: settings.timeoutMs,
      mapError: mapGeminiError,
    });
  }

  describe(): Record<string, unknown> {
    const { url, chatModel, embeddingModel } = this;
    return describeSettings({ ...this.settings, url, chatModel, embeddingModel }, this.capabilities);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = bareModel(request.model ?? this.chatModel);
    const response = await this.http.postJson(
      `/models/${encodeURIComponent(model)}:generateContent`,
      toGeminiGenerateBody(request, this.name),
      { signal: request.signal, model },
    );
    return fromGeminiResponse(response.body, this.name, model);
  }

  /**
   * `streamGenerateContent?alt=sse`: every event is a partial GenerateContentResponse; the last one carries
   * the finish reason and usage. The stream has no terminator event, so an end without a finish reason
   * means it was cut short.
   */
  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = bareModel(request.model ?? this.chatModel);
    const response = await this.http.stream(
      'POST',
      `/models/${encodeURIComponent(model)}:streamGenerateContent`,
      toGeminiGenerateBody(request, this.name),
      { signal: request.signal, model, query: { alt: 'sse' }, headers: { accept: 'text/event-stream' } },
    );
    let last: GenerateResult | undefined;
    for await (const event of readSseEvents(response.body)) {
      const data = parseEventObject(event.data, this.name);
      // A failure after the 200 arrives as an event holding Google's error body.
      if (isObject(data.error)) {
        const code = numberOrUndefined(data.error.code);
        throw mapGeminiError({ provider: this.name, status: code ?? 500, headers: {}, body: data, model });
      }
      const piece = fromGeminiResponse(data, this.name, model);
      if (piece.text !== '') yield { done: false, text: piece.text };
      last = { ...piece, usage: piece.usage ?? last?.usage };
    }
    if (last?.finishReason === undefined) {
      throw new InvalidResponseError(`${this.name}: upstream stream ended without a finish reason`, {
        provider: this.name,
      });
    }
    yield { done: true, model: last.model, finishReason: last.finishReason, usage: last.usage };
  }

  /** One `batchEmbedContents` call for any number of inputs; the configured dimension is requested and enforced. */
  async embed(request: EmbedRequest): Promise<EmbedResult> {
    if (request.inputs.length === 0) {
      throw new InvalidRequestError(`${this.name}: at least one input is required`, { provider: this.name });
    }
    const model = bareModel(request.model ?? this.embeddingModel);
    const dimensions = this.settings.embeddingDimensions;
    const requests = request.inputs.map((text) => ({
      model: `models/${model}`,
      content: { parts: [{ text }] },
      ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}),
    }));
    const response = await this.http.postJson(
      `/models/${encodeURIComponent(model)}:batchEmbedContents`,
      { requests },
      { signal: request.signal, model },
    );
    const body = response.body;
    if (!isObject(body) || !Array.isArray(body.embeddings)) {
      throw new InvalidResponseError(`${this.name}: upstream returned no embeddings`, { provider: this.name });
    }
    const vectors = body.embeddings.map((e) => (isObject(e) ? e.values : undefined));
    return { embeddings: validateEmbeddings(vectors, request.inputs.length, dimensions, this.name), model };
  }

  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    const models: ModelInfo[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_MODEL_PAGES; page++) {
      const response = await this.http.getJson('/models', {
        signal,
        query: { pageSize: String(MODELS_PAGE_SIZE), pageToken },
      });
      const body = response.body;
      if (!isObject(body)) {
        throw new InvalidResponseError(`${this.name}: upstream model list is not an object`, { provider: this.name });
      }
      // An account with no models answers `{}`.
      const entries = body.models ?? [];
      if (!Array.isArray(entries)) {
        throw new InvalidResponseError(`${this.name}: upstream model list is not an array`, { provider: this.name });
      }
      for (const entry of entries) {
        if (isObject(entry) && typeof entry.name === 'string') {
          models.push({ id: bareModel(entry.name), provider: this.name });
        }
      }
      if (typeof body.nextPageToken !== 'string' || body.nextPageToken === '') break;
      pageToken = body.nextPageToken;
    }
    return models;
  }

  /** Ready when `GET models/{model}` finds both configured models. */
  healthCheck(): Promise<HealthResult> {
    return probeModelHealth(this, [...new Set([this.chatModel, this.embeddingModel])], (model) =>
      this.http.getJson(`/models/${encodeURIComponent(model)}`, { model }),
    );
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** Upstream enum values (finish reasons, statuses) pass only as plain tokens. */
function enumToken(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(value) ? value : undefined;
}
