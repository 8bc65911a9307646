/**
 * Gemini adapter (Generative Language API, v1beta): `models/{model}:generateContent` for generation,
 * `models/{model}:batchEmbedContents` for one or many embeddings in a single call (as the official SDK
 * does), `models` for listing. The key travels in `x-goog-api-key`, never in the query string. The request
 * and answer translations live beside it: gemini-messages (contents), gemini-tools (tools and toolConfig),
 * gemini-response-format, gemini-response, gemini-stream, gemini-finish-reason, gemini-usage, gemini-errors.
 */
import { isObject } from '../../../common/json-values';
import { InvalidRequestError, InvalidResponseError, TollgateError } from '../../errors';
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
  ProviderCapabilities,
  ProviderSettings,
} from '../ai-provider.interface';
import { parseEventObject, readSseEvents } from '../../../upstream/stream-framing';
import { UpstreamClient } from '../../../upstream/upstream-client';
import { ImageDownloader, type ImageInliner } from '../image-downloads';
import { checkEmbeddingDimensions, describeSettings, probeModelHealth, validateEmbeddings } from '../provider-support';
import { mapGeminiError } from './gemini-errors';
import { addPlaceholderThoughtSignatures, convertGeminiMessages } from './gemini-messages';
import { convertGeminiResponseFormat } from './gemini-response-format';
import { convertGeminiResponse } from './gemini-response';
import { GeminiStreamTranslator } from './gemini-stream';
import { convertGeminiTools } from './gemini-tools';
import type { GeminiGenerateBody, GeminiGenerationConfig } from './gemini-wire';

export const GEMINI_DEFAULT_URL = 'https://generativelanguage.googleapis.com/v1beta';
export const GEMINI_DEFAULT_CHAT_MODEL = 'gemini-2.5-flash';
export const GEMINI_DEFAULT_EMBEDDING_MODEL = 'gemini-embedding-001';
const MODELS_PAGE_SIZE = 1000;
const MAX_MODEL_PAGES = 10;

/**
 * Function calling, JSON output and image input came with Gemini 1.5 (the `-latest` aliases point at 2.5 and
 * later); Gemini 1.0 and Gemma lack them.
 */
export const FEATURED_GEMINI_MODEL = /^gemini-(1\.5|[2-9]|(flash|flash-lite|pro)-latest$)/;

/**
 * Models that validate thought signatures on replayed function calls: Gemini 3 and later, and the `-latest`
 * aliases, which may point at them (on 2.5 a signature is optional, so the placeholder is not sent there).
 */
const SIGNATURE_CHECKING_MODEL = /^gemini-([3-9]|[1-9]\d|(flash|flash-lite|pro)-latest$)/;

/** Accepts `gemini-x` or `models/gemini-x`; paths and bodies use the bare id. */
export function bareModel(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}

/**
 * Tools are checked before messages, so a refused request downloads no image. Penalties of 0 are the default
 * and send nothing; `seed` and non-zero penalties go into generationConfig. On models that check thought
 * signatures, an unsigned call turn gets Google's placeholder.
 */
export async function toGeminiGenerateBody(request: GenerateRequest, model: string, provider: string, images: ImageInliner): Promise<GeminiGenerateBody> {
  const tools = convertGeminiTools(request, provider);
  const body: GeminiGenerateBody = { ...(await convertGeminiMessages(request.messages, provider, images, request.signal)), ...tools };
  if (SIGNATURE_CHECKING_MODEL.test(model)) addPlaceholderThoughtSignatures(body.contents);
  const config: GeminiGenerationConfig = {};
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.topK !== undefined) config.topK = request.topK;
  if (request.stop !== undefined && request.stop.length > 0) config.stopSequences = request.stop;
  if (request.seed !== undefined) config.seed = request.seed;
  if (request.presencePenalty !== undefined && request.presencePenalty !== 0) config.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined && request.frequencyPenalty !== 0) config.frequencyPenalty = request.frequencyPenalty;
  Object.assign(config, convertGeminiResponseFormat(request.responseFormat));
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

export class GeminiProvider implements AiProvider {
  readonly kind = 'gemini' as const;
  readonly capabilities: ProviderCapabilities = {
    generate: true,
    embeddings: true,
    batchEmbeddings: true,
    streaming: true,
    listModels: true,
    tools: true,
    structuredOutput: true,
    vision: true,
  };
  readonly name: string;
  private readonly http: UpstreamClient;
  private readonly url: string;
  private readonly chatModel: string;
  private readonly embeddingModel: string;
  private readonly images: ImageInliner;
  /** The downloader this adapter made for itself, when it was given none (the registry gives its shared one). */
  private readonly ownImages?: ImageDownloader;

  constructor(
    private readonly settings: ProviderSettings,
    images?: ImageInliner,
  ) {
    if (!settings.apiKey) throw new TollgateError(`${settings.name}: an api_key is required for gemini`);
    this.name = settings.name;
    this.images = images ?? (this.ownImages = new ImageDownloader());
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

  supportsFeature(_feature: ModelFeature, model: string | undefined): boolean {
    return FEATURED_GEMINI_MODEL.test(bareModel(model ?? this.chatModel));
  }

  describe(): Record<string, unknown> {
    const { url, chatModel, embeddingModel } = this;
    return describeSettings({ ...this.settings, url, chatModel, embeddingModel }, this.capabilities);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = bareModel(request.model ?? this.chatModel);
    const response = await this.http.postJson(
      `/models/${encodeURIComponent(model)}:generateContent`,
      await toGeminiGenerateBody(request, model, this.name, this.images),
      { signal: request.signal, onSent: request.onSent, model },
    );
    return convertGeminiResponse(response.body, this.name, model);
  }

  /** `streamGenerateContent?alt=sse`, translated event by event (gemini-stream.ts). */
  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = bareModel(request.model ?? this.chatModel);
    const response = await this.http.stream(
      'POST',
      `/models/${encodeURIComponent(model)}:streamGenerateContent`,
      await toGeminiGenerateBody(request, model, this.name, this.images),
      { signal: request.signal, onSent: request.onSent, model, query: { alt: 'sse' }, headers: { accept: 'text/event-stream' } },
    );
    const translator = new GeminiStreamTranslator(this.name, model);
    for await (const event of readSseEvents(response.body)) {
      const chunk = translator.event(parseEventObject(event.data, this.name));
      if (chunk) yield chunk;
    }
    yield translator.finish();
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
      { signal: request.signal, onSent: request.onSent, model },
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

  async close(): Promise<void> {
    await Promise.all([this.http.close(), this.ownImages?.close()]);
  }
}
