/**
 * AWS Bedrock through its Converse API: `POST /model/<modelId>/converse` and `/converse-stream` (one format for
 * Anthropic, Llama, Mistral, Nova and the other models), embeddings through `POST /model/<modelId>/invoke` (Titan
 * text embeddings: one `inputText` per call; Cohere: `texts` in one call). Every request is signed with SigV4 or
 * carries a Bedrock API key (bedrock-auth.ts). Translations: bedrock-converse.ts; streams: bedrock-stream.ts.
 */
import { isObject, numberOrUndefined } from '../../../common/json-values';
import { InvalidRequestError, InvalidResponseError, TollgateError } from '../../errors';
import type {
  AiProvider,
  BedrockSettings,
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
import { UpstreamClient } from '../../../upstream/upstream-client';
import { ImageDownloader, type ImageInliner } from '../image-downloads';
import { checkEmbeddingDimensions, describeSettings, probeModelHealth, sendTogether, validateEmbeddings } from '../provider-support';
import { BedrockAuth } from './bedrock-auth';
import { fromConverseResponse, toConverseBody } from './bedrock-converse';
import { mapBedrockError, mapBedrockStreamException } from './bedrock-errors';
import { BedrockStreamTranslator, readEventStream } from './bedrock-stream';

export const BEDROCK_DEFAULT_CHAT_MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
export const BEDROCK_DEFAULT_EMBEDDING_MODEL = 'amazon.titan-embed-text-v2:0';

export function bedrockDefaultUrl(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

/** Image input: Claude 3+, Nova Lite/Pro/Premier, Llama 3.2 11B/90B and 4, Mistral Pixtral (text-only families otherwise). */
const VISION_MODEL = /anthropic\.claude-(3|sonnet-4|opus-4|haiku-4)|amazon\.nova-(lite|pro|premier)|llama3-2-(11|90)b|llama4|pixtral/;

export class BedrockProvider implements AiProvider {
  readonly kind = 'bedrock' as const;
  readonly capabilities: ProviderCapabilities = {
    generate: true,
    embeddings: true,
    batchEmbeddings: true,
    streaming: true,
    listModels: true,
    tools: true,
    structuredOutput: false,
    vision: true,
    documents: true,
  };
  readonly name: string;
  private readonly bedrock: BedrockSettings;
  private readonly url: string;
  private readonly chatModel: string;
  private readonly embeddingModel: string;
  private readonly http: UpstreamClient;
  private readonly auth: BedrockAuth;
  private readonly basePath: string;
  private readonly images: ImageInliner;
  private readonly ownImages?: ImageDownloader;

  constructor(
    private readonly settings: ProviderSettings,
    images?: ImageInliner,
  ) {
    if (!settings.bedrock) throw new TollgateError(`${settings.name}: bedrock.region is required for kind bedrock`);
    this.name = settings.name;
    this.bedrock = settings.bedrock;
    checkEmbeddingDimensions(settings);
    this.url = (settings.url ?? bedrockDefaultUrl(this.bedrock.region)).replace(/\/+$/, '');
    this.chatModel = settings.chatModel ?? BEDROCK_DEFAULT_CHAT_MODEL;
    this.embeddingModel = settings.embeddingModel ?? BEDROCK_DEFAULT_EMBEDDING_MODEL;
    this.http = new UpstreamClient({
      provider: settings.name,
      baseUrl: this.url,
      timeoutMs: settings.timeoutMs,
      mapError: (response) => mapBedrockError(response),
    });
    const origin = new URL(this.url);
    this.basePath = origin.pathname.replace(/\/+$/, '');
    this.auth = new BedrockAuth(settings.name, this.bedrock, settings.apiKey, origin);
    this.images = images ?? (this.ownImages = new ImageDownloader());
  }

  supportsFeature(feature: ModelFeature, model: string | undefined): boolean {
    if (feature !== 'vision') return this.capabilities[feature] === true;
    return VISION_MODEL.test(model ?? this.chatModel);
  }

  describe(): Record<string, unknown> {
    const { url, chatModel, embeddingModel } = this;
    return {
      ...describeSettings({ ...this.settings, url, chatModel, embeddingModel }, this.capabilities),
      region: this.bedrock.region,
      auth: this.auth.mode,
      ...(this.bedrock.profile !== undefined ? { profile: this.bedrock.profile } : {}),
    };
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = request.model ?? this.chatModel;
    const body = await toConverseBody(request, this.name, this.images);
    const response = await this.post(this.modelPath(model, 'converse'), body, request, model);
    return fromConverseResponse(response.body, this.name, model);
  }

  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = request.model ?? this.chatModel;
    const body = await toConverseBody(request, this.name, this.images);
    const path = this.modelPath(model, 'converse-stream');
    const headers = await this.auth.headers('POST', this.basePath + path, JSON.stringify(body));
    const response = await this.http.stream('POST', path, body, {
      signal: request.signal,
      onSent: request.onSent,
      model,
      headers: { ...headers, accept: 'application/vnd.amazon.eventstream' },
    });
    const translator = new BedrockStreamTranslator(this.name, model, (type) => mapBedrockStreamException(this.name, model, type));
    for await (const message of readEventStream(response.body, this.name)) {
      const chunk = translator.message(message);
      if (chunk) yield chunk;
    }
    yield translator.finish();
  }

  /** Titan: one InvokeModel call per input (its body takes one text), sent together; Cohere: one call for the batch. */
  async embed(request: EmbedRequest): Promise<EmbedResult> {
    if (request.inputs.length === 0) throw new InvalidRequestError(`${this.name}: at least one input is required`, { provider: this.name });
    const model = request.model ?? this.embeddingModel;
    const dimensions = this.settings.embeddingDimensions;
    const path = this.modelPath(model, 'invoke');
    if (model.startsWith('cohere.')) {
      const response = await this.post(path, { texts: request.inputs, input_type: 'search_document' }, request, model);
      const vectors = isObject(response.body) && Array.isArray(response.body.embeddings) ? response.body.embeddings : [];
      return { embeddings: validateEmbeddings(vectors, request.inputs.length, dimensions, this.name), model };
    }
    const answers = await sendTogether(request.inputs.length, request, (index, options) =>
      this.post(path, { inputText: request.inputs[index], ...(dimensions !== undefined ? { dimensions } : {}) }, options, model),
    );
    let inputTokens = 0;
    const vectors = answers.map(({ body }) => {
      if (!isObject(body)) throw new InvalidResponseError(`${this.name}: upstream embedding answer is not an object`, { provider: this.name });
      inputTokens += numberOrUndefined(body.inputTextTokenCount) ?? 0;
      return body.embedding;
    });
    return {
      embeddings: validateEmbeddings(vectors, request.inputs.length, dimensions, this.name),
      model,
      ...(inputTokens > 0 ? { usage: { inputTokens, totalTokens: inputTokens } } : {}),
    };
  }

  /** The configured models: the runtime endpoint has no model list (that is the control plane's, another host). */
  listModels(): Promise<ModelInfo[]> {
    const ids = new Set([this.chatModel, this.embeddingModel, ...(this.settings.models ?? [])]);
    return Promise.resolve([...ids].map((id) => ({ id, provider: this.name })));
  }

  /**
   * Ready when the chat model answers a one-token Converse call with these credentials: the runtime API has no
   * free call that proves the credentials, the region and the model together.
   */
  healthCheck(): Promise<HealthResult> {
    return probeModelHealth(this, [this.chatModel], (model) =>
      this.post(this.modelPath(model, 'converse'), { messages: [{ role: 'user', content: [{ text: 'ping' }] }], inferenceConfig: { maxTokens: 1 } }, {}, model),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.http.close(), this.ownImages?.close()]);
  }

  /** The model id percent-encoded as the AWS SDK sends it (`anthropic.claude-...-v1%3A0`), and signed so. */
  private modelPath(model: string, operation: string): string {
    return `/model/${encodeURIComponent(model)}/${operation}`;
  }

  private async post(path: string, body: unknown, request: Pick<GenerateRequest, 'signal' | 'onSent'>, model: string) {
    const headers = await this.auth.headers('POST', this.basePath + path, JSON.stringify(body));
    return this.http.postJson(path, body, { signal: request.signal, onSent: request.onSent, model, headers });
  }
}
