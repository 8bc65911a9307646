/**
 * Vertex AI: Google's models and Anthropic's Claude in a Google Cloud project, under
 * `<url>/projects/<project>/locations/<location>/publishers/<publisher>/models/<model>:<method>`.
 * - Gemini (`publishers/google`): `:generateContent` and `:streamGenerateContent?alt=sse` with the Gemini adapter's
 *   body and answer translation; embeddings through `:predict` (`instances[].content`).
 * - Claude (`publishers/anthropic`, any model id starting `claude-`): `:rawPredict` and `:streamRawPredict` with the
 *   Anthropic adapter's Messages body, the model in the URL instead of the body and `anthropic_version:
 *   vertex-2023-10-16` in it. A request in Anthropic's own dialect goes as the caller wrote it, as to the
 *   `anthropic` kind (docs/decisions.md B16, B24): `cache_control`, thinking blocks, server tools Vertex runs and the
 *   caller's `anthropic-beta`, its answer and stream kept as Vertex sent them; what only Anthropic's own API has
 *   is refused before the call (NativeRequest.firstPartyOnly).
 * Every call carries a Google OAuth bearer (vertex-credentials.ts). Errors come in Google's shape from Vertex itself
 * (auth, quota, unknown model) and in Anthropic's from Claude; each is read by its own mapper.
 */
import { isObject, numberOrUndefined } from '../../../common/json-values';
import { InvalidRequestError, InvalidResponseError, ProviderError, TollgateError } from '../../errors';
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
  NativeCountRequest,
  NativeDialect,
  NativeRequest,
  ProviderCapabilities,
  ProviderSettings,
  VertexSettings,
} from '../ai-provider.interface';
import { parseEventObject, readSseEvents } from '../../../upstream/stream-framing';
import { UpstreamClient } from '../../../upstream/upstream-client';
import type { UpstreamErrorResponse } from '../../../upstream/upstream-types';
import { anthropicErrorType, mapAnthropicError } from '../anthropic/anthropic-errors';
import { anthropicNative, nativeChunks, nativeMessagesBody } from '../anthropic/anthropic-native';
import { callerRefusal } from '../caller-refusal';
import { fromAnthropicMessage } from '../anthropic/anthropic-response';
import { AnthropicStreamTranslator } from '../anthropic/anthropic-stream';
import { jsonOutputTool } from '../anthropic/anthropic-tools';
import { PRE_CLAUDE_3, toAnthropicMessagesBody } from '../anthropic/anthropic.provider';
import { mapGeminiError } from '../gemini/gemini-errors';
import { convertGeminiResponse } from '../gemini/gemini-response';
import { GeminiStreamTranslator } from '../gemini/gemini-stream';
import { bareModel, FEATURED_GEMINI_MODEL, toGeminiGenerateBody } from '../gemini/gemini.provider';
import { ImageDownloader, type ImageInliner } from '../image-downloads';
import { checkEmbeddingDimensions, describeSettings, probeModelHealth, sendTogether, validateEmbeddings } from '../provider-support';
import { VertexCredentials } from './vertex-credentials';

/** The Messages API version Claude on Vertex takes, in the body (the header of the direct API does not apply). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
export const VERTEX_DEFAULT_CHAT_MODEL = 'gemini-2.5-flash';
export const VERTEX_DEFAULT_EMBEDDING_MODEL = 'text-embedding-005';

/** Google's regional endpoint, or the global one for location `global`. */
export function vertexDefaultUrl(location: string): string {
  return location === 'global' ? 'https://aiplatform.googleapis.com/v1' : `https://${location}-aiplatform.googleapis.com/v1`;
}

const isClaude = (model: string) => model.startsWith('claude-');
/** gemini-embedding-001 takes one instance per :predict call; text-embedding-* and the multilingual ones take many. */
const SINGLE_INSTANCE_EMBEDDING = /^gemini-embedding/;

/** How Vertex words its refusal of betas it does not take: each refused value in backquotes. */
const REFUSED_BETAS = /Unexpected value\(s\) (.+?) for the `anthropic-beta` header/;

/** The betas a Claude-on-Vertex refusal names, if it is one (docs/decisions.md B24). */
function refusedBetas(response: UpstreamErrorResponse): string[] {
  if (response.status !== 400) return [];
  const message = (response.body as { error?: { message?: unknown } } | undefined)?.error?.message;
  const named = typeof message === 'string' ? REFUSED_BETAS.exec(message)?.[1] : undefined;
  return named ? [...named.matchAll(/`([^`]+)`/g)].map((match) => match[1]) : [];
}

/** The caller's Messages body as Vertex takes it: the model in the URL, Vertex's version in the body (docs/decisions.md B24). */
function vertexNativeBody(native: NativeRequest, request: GenerateRequest, model: string, stream: boolean): Record<string, unknown> {
  const { model: _inUrl, ...body } = nativeMessagesBody(native, request, model, stream);
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body };
}

/** Claude's errors carry Anthropic's `error.type`; everything Vertex answers itself is Google's shape. */
export function mapVertexError(response: UpstreamErrorResponse): TollgateError {
  return anthropicErrorType(response.body) !== undefined ? mapAnthropicError(response) : mapGeminiError(response);
}

export class VertexProvider implements AiProvider {
  readonly kind = 'vertex' as const;
  readonly capabilities: ProviderCapabilities = {
    generate: true,
    embeddings: true,
    batchEmbeddings: true,
    streaming: true,
    listModels: true,
    tools: true,
    structuredOutput: true,
    vision: true,
    documents: true,
  };
  readonly name: string;
  private readonly vertex: VertexSettings;
  private readonly url: string;
  private readonly chatModel: string;
  private readonly embeddingModel: string;
  private readonly http: UpstreamClient;
  private readonly credentials: VertexCredentials;
  private readonly images: ImageInliner;
  private readonly ownImages?: ImageDownloader;
  /** Betas this Vertex refused by name: no longer sent to it, and listed in describe() (B24). */
  private readonly refused = new Set<string>();

  constructor(
    private readonly settings: ProviderSettings,
    images?: ImageInliner,
  ) {
    if (!settings.vertex) throw new TollgateError(`${settings.name}: vertex.project and vertex.location are required for kind vertex`);
    this.name = settings.name;
    this.vertex = settings.vertex;
    checkEmbeddingDimensions(settings);
    this.credentials = new VertexCredentials(settings.name, settings.vertex);
    this.url = settings.url ?? vertexDefaultUrl(this.vertex.location);
    this.chatModel = bareModel(settings.chatModel ?? VERTEX_DEFAULT_CHAT_MODEL);
    this.embeddingModel = bareModel(settings.embeddingModel ?? VERTEX_DEFAULT_EMBEDDING_MODEL);
    const { project, location } = this.vertex;
    this.http = new UpstreamClient({
      provider: settings.name,
      baseUrl: `${this.url.replace(/\/+$/, '')}/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/publishers`,
      timeoutMs: settings.timeoutMs,
      mapError: (response) => {
        for (const beta of refusedBetas(response)) this.refused.add(beta);
        return mapVertexError(response);
      },
    });
    this.images = images ?? (this.ownImages = new ImageDownloader());
  }

  /** Documents go to Claude only: the Gemini translation has no document part yet. */
  supportsFeature(feature: ModelFeature, model: string | undefined): boolean {
    const chosen = bareModel(model ?? this.chatModel);
    if (isClaude(chosen)) return !PRE_CLAUDE_3.test(chosen);
    return feature !== 'documents' && FEATURED_GEMINI_MODEL.test(chosen);
  }

  /** Claude takes a Messages body as written; Gemini's own dialect needs no pass-through (docs/decisions.md B16). */
  speaksNative(dialect: NativeDialect, model: string | undefined): boolean {
    return dialect === 'anthropic-messages' && isClaude(bareModel(model ?? this.chatModel));
  }

  describe(): Record<string, unknown> {
    const { url, chatModel, embeddingModel } = this;
    return {
      ...describeSettings({ ...this.settings, url, chatModel, embeddingModel }, this.capabilities),
      project: this.vertex.project,
      location: this.vertex.location,
      credentials: this.credentials.source,
      ...(this.refused.size > 0 ? { refused_betas: [...this.refused] } : {}),
    };
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = bareModel(request.model ?? this.chatModel);
    if (isClaude(model)) {
      const native = anthropicNative(request);
      const options = await this.callOptions(request, model);
      if (!native) {
        const response = await this.http.postJson(this.modelPath('anthropic', model, 'rawPredict'), this.claudeBody(request, model, false), options);
        return fromAnthropicMessage(response.body, this.name, model, jsonOutputTool(request.responseFormat));
      }
      const response = await this.withBetas(native.headers, options, () => this.http.postJson(this.modelPath('anthropic', model, 'rawPredict'), vertexNativeBody(native, request, model, false), options));
      return { ...fromAnthropicMessage(response.body, this.name, model), native: response.body as Record<string, unknown> };
    }
    const body = await toGeminiGenerateBody(request, model, this.name, this.images);
    const response = await this.http.postJson(this.modelPath('google', model, 'generateContent'), body, await this.callOptions(request, model));
    return convertGeminiResponse(response.body, this.name, model);
  }

  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = bareModel(request.model ?? this.chatModel);
    const options = await this.callOptions(request, model);
    options.headers.accept = 'text/event-stream';
    if (isClaude(model)) {
      const native = anthropicNative(request);
      if (native) {
        const response = await this.withBetas(native.headers, options, () => this.http.stream('POST', this.modelPath('anthropic', model, 'streamRawPredict'), vertexNativeBody(native, request, model, true), options));
        yield* nativeChunks(response.body, this.name, model);
        return;
      }
      const response = await this.http.stream('POST', this.modelPath('anthropic', model, 'streamRawPredict'), this.claudeBody(request, model, true), options);
      const translator = new AnthropicStreamTranslator(this.name, model, jsonOutputTool(request.responseFormat));
      for await (const event of readSseEvents(response.body)) {
        for (const chunk of translator.translate(parseEventObject(event.data, this.name))) {
          yield chunk;
          if (chunk.done) return;
        }
      }
      throw new InvalidResponseError(`${this.name}: upstream stream ended before message_stop`, { provider: this.name });
    }
    const body = await toGeminiGenerateBody(request, model, this.name, this.images);
    const response = await this.http.stream('POST', this.modelPath('google', model, 'streamGenerateContent'), body, { ...options, query: { alt: 'sse' } });
    const translator = new GeminiStreamTranslator(this.name, model);
    for await (const event of readSseEvents(response.body)) {
      const chunk = translator.event(parseEventObject(event.data, this.name));
      if (chunk) yield chunk;
    }
    yield translator.finish();
  }

  /**
   * Sends a native Claude call with the caller's `anthropic-beta` less the betas Vertex has refused, the only
   * caller header Vertex reads. Vertex checks the header against the betas it takes and refuses the call naming
   * the others; a refusal that names a beta sent is learned and the call sent once more without it, so a client
   * that sends first-party betas (Claude Code) is refused once per beta and process, not on every call. Any other
   * 4xx refused the caller's own body (B16).
   */
  private async withBetas<T>(headers: Readonly<Record<string, string>>, options: { headers: Record<string, string> }, send: () => Promise<T>): Promise<T> {
    const betas = (headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim()).filter((beta) => beta !== '');
    const kept = () => betas.filter((beta) => !this.refused.has(beta));
    const sent = kept();
    if (sent.length > 0) options.headers['anthropic-beta'] = sent.join(',');
    try {
      return await send();
    } catch (error) {
      const again = kept();
      if (!(error instanceof ProviderError && error.status === 400) || again.length === sent.length) throw callerRefusal(error);
      if (again.length > 0) options.headers['anthropic-beta'] = again.join(',');
      else delete options.headers['anthropic-beta'];
      return send().catch((retried: unknown) => {
        throw callerRefusal(retried);
      });
    }
  }

  /** Claude's `count-tokens:rawPredict` with the caller's body and betas and the routed model, as Anthropic's count_tokens. */
  async countNativeTokens(request: NativeCountRequest): Promise<Record<string, unknown>> {
    const model = bareModel(request.model ?? this.chatModel);
    const options = await this.callOptions(request, model);
    const body = { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...request.native.body, model };
    const response = await this.withBetas(request.native.headers, options, () => this.http.postJson(this.modelPath('anthropic', 'count-tokens', 'rawPredict'), body, options));
    if (!isObject(response.body) || typeof response.body.input_tokens !== 'number') {
      throw new InvalidResponseError(`${this.name}: upstream token count has no input_tokens`, { provider: this.name });
    }
    return response.body;
  }

  /** `:predict` with one instance per input (one call per input for the single-instance Gemini embedding models). */
  async embed(request: EmbedRequest): Promise<EmbedResult> {
    if (request.inputs.length === 0) {
      throw new InvalidRequestError(`${this.name}: at least one input is required`, { provider: this.name });
    }
    const model = bareModel(request.model ?? this.embeddingModel);
    const batches = SINGLE_INSTANCE_EMBEDDING.test(model) ? request.inputs.map((input) => [input]) : [request.inputs];
    const answers = await sendTogether(batches.length, request, (index, options) => this.predict(options, model, batches[index]));
    const predictions = answers.flat();
    const vectors = predictions.map((p) => (isObject(p) && isObject(p.embeddings) ? p.embeddings.values : undefined));
    let inputTokens = 0;
    for (const p of predictions) {
      const statistics = isObject(p) && isObject(p.embeddings) && isObject(p.embeddings.statistics) ? p.embeddings.statistics : undefined;
      inputTokens += numberOrUndefined(statistics?.token_count) ?? 0;
    }
    return {
      embeddings: validateEmbeddings(vectors, request.inputs.length, this.settings.embeddingDimensions, this.name),
      model,
      ...(inputTokens > 0 ? { usage: { inputTokens, totalTokens: inputTokens } } : {}),
    };
  }

  /**
   * The configured models: Vertex has no listing of the publisher models one project may call (Model Garden's
   * catalogue names every model of every publisher, whether enabled here or not).
   */
  listModels(): Promise<ModelInfo[]> {
    const ids = new Set([this.chatModel, this.embeddingModel, ...(this.settings.models ?? []).map(bareModel)]);
    return Promise.resolve([...ids].map((id) => ({ id, provider: this.name, ownedBy: isClaude(id) ? 'anthropic' : 'google' })));
  }

  /**
   * Ready when the chat model counts tokens with these credentials (`:countTokens`, or Claude's `count-tokens`):
   * free calls that prove the token, the project, the location and the model.
   */
  healthCheck(): Promise<HealthResult> {
    return probeModelHealth(this, [this.chatModel], async (model) => {
      const messages = [{ role: 'user' as const, content: 'ping' }];
      if (isClaude(model)) {
        return this.http.postJson(this.modelPath('anthropic', 'count-tokens', 'rawPredict'), { model, messages }, await this.callOptions({}, model));
      }
      const contents = [{ role: 'user', parts: [{ text: 'ping' }] }];
      return this.http.postJson(this.modelPath('google', model, 'countTokens'), { contents }, await this.callOptions({}, model));
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.http.close(), this.ownImages?.close()]);
  }

  private modelPath(publisher: 'google' | 'anthropic', model: string, method: string): string {
    return `/${publisher}/models/${encodeURIComponent(model)}:${method}`;
  }

  /** The Messages body without `model` (it is in the URL) and with Vertex's version field. */
  private claudeBody(request: GenerateRequest, model: string, stream: boolean): Record<string, unknown> {
    const { model: _inUrl, ...body } = toAnthropicMessagesBody(request, model, this.name);
    return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body, ...(stream ? { stream: true } : {}) };
  }

  private async callOptions(request: { signal?: AbortSignal; onSent?: GenerateRequest['onSent'] }, model: string) {
    return { signal: request.signal, onSent: request.onSent, model, headers: { authorization: await this.credentials.authorization() } as Record<string, string> };
  }

  private async predict(request: Pick<EmbedRequest, 'signal' | 'onSent'>, model: string, inputs: string[]): Promise<unknown[]> {
    const dimensions = this.settings.embeddingDimensions;
    const body = {
      instances: inputs.map((content) => ({ content })),
      ...(dimensions !== undefined ? { parameters: { outputDimensionality: dimensions } } : {}),
    };
    const response = await this.http.postJson(this.modelPath('google', model, 'predict'), body, await this.callOptions(request, model));
    const predictions = isObject(response.body) ? response.body.predictions : undefined;
    if (!Array.isArray(predictions) || predictions.length !== inputs.length) {
      throw new InvalidResponseError(`${this.name}: upstream returned no prediction per input`, { provider: this.name });
    }
    return predictions;
  }
}
