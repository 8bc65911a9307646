/**
 * Ollama adapter (local model server, no auth): `/api/chat` for generation (with `"stream": false`, or
 * NDJSON when streaming), `/api/embed` with an array input (one call per batch), `/api/tags` for the pulled
 * models. Tools, images and `format` are translated by the small mapping files beside this one. Ollama answers
 * errors as `{"error": "..."}`; only the status is read from them.
 */
import { isObject, numberOrUndefined } from '../../../common/json-values';
import { InvalidRequestError, InvalidResponseError, ProviderError } from '../../errors';
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
import { readNdjson } from '../../../upstream/stream-framing';
import { UpstreamClient } from '../../../upstream/upstream-client';
import { ImageDownloader, type ImageInliner } from '../image-downloads';
import { checkEmbeddingDimensions, checkHealth, describeSettings, validateEmbeddings } from '../provider-support';
import { type OllamaMessage, toOllamaMessages } from './ollama-messages';
import { ollamaModelSupports } from './ollama-model-features';
import { type OllamaOptions, type OllamaTool, toOllamaFormat, toOllamaOptions, toOllamaTools } from './ollama-request-options';
import { fromOllamaToolCalls, mapOllamaFinishReason, ollamaUsage } from './ollama-response';

export const OLLAMA_DEFAULT_URL = 'http://localhost:11434';
export const OLLAMA_DEFAULT_CHAT_MODEL = 'llama3.2';
export const OLLAMA_DEFAULT_EMBEDDING_MODEL = 'nomic-embed-text';

interface OllamaChatBody {
  model: string;
  messages: OllamaMessage[];
  stream: boolean;
  tools?: OllamaTool[];
  format?: 'json' | Record<string, unknown>;
  options?: OllamaOptions;
}

/** Ollama takes system messages inline; each optional part is sent only when the request has it. */
function toOllamaChatBody(request: GenerateRequest, model: string, stream: boolean, provider: string): OllamaChatBody {
  if (!request.messages.some((m) => m.role !== 'system')) {
    throw new InvalidRequestError(`${provider}: at least one user or assistant message is required`, { provider });
  }
  const body: OllamaChatBody = { model, messages: toOllamaMessages(request.messages, provider), stream };
  const tools = toOllamaTools(request, provider);
  if (tools) body.tools = tools;
  const format = toOllamaFormat(request);
  if (format !== undefined) body.format = format;
  const options = toOllamaOptions(request);
  if (options) body.options = options;
  return body;
}

function fromOllamaChat(body: unknown, provider: string, requestedModel: string): GenerateResult {
  if (!isObject(body) || !isObject(body.message) || typeof body.message.content !== 'string') {
    throw new InvalidResponseError(`${provider}: upstream chat response has no message content`, { provider });
  }
  const toolCalls = fromOllamaToolCalls(body.message.tool_calls, 0, provider);
  return {
    text: body.message.content,
    model: typeof body.model === 'string' ? body.model : requestedModel,
    finishReason: mapOllamaFinishReason(body.done_reason, toolCalls.length > 0),
    usage: ollamaUsage(body),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
}

export class OllamaProvider implements AiProvider {
  readonly kind = 'ollama' as const;
  readonly capabilities: ProviderCapabilities = {
    generate: true,
    embeddings: true,
    batchEmbeddings: true,
    streaming: true,
    listModels: true,
    tools: true,
    structuredOutput: true,
    // Per model family: see supportsFeature.
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
    this.name = settings.name;
    this.images = images ?? (this.ownImages = new ImageDownloader());
    checkEmbeddingDimensions(settings);
    this.url = settings.url ?? OLLAMA_DEFAULT_URL;
    this.chatModel = settings.chatModel ?? OLLAMA_DEFAULT_CHAT_MODEL;
    this.embeddingModel = settings.embeddingModel ?? OLLAMA_DEFAULT_EMBEDDING_MODEL;
    // The default status mapping fits Ollama: 404 for a model that is not pulled, 5xx for server trouble.
    this.http = new UpstreamClient({ provider: settings.name, baseUrl: this.url, timeoutMs: settings.timeoutMs });
  }

  supportsFeature(feature: ModelFeature, model: string | undefined): boolean {
    return ollamaModelSupports(feature, model ?? this.chatModel);
  }

  /** Ollama takes image bytes only: URLs are downloaded first, within the image download bounds. */
  private async withImageBytes(request: GenerateRequest): Promise<GenerateRequest> {
    return { ...request, messages: await this.images.inline(request.messages, request.signal) };
  }

  describe(): Record<string, unknown> {
    const { url, chatModel, embeddingModel } = this;
    return describeSettings({ ...this.settings, url, chatModel, embeddingModel }, this.capabilities);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = request.model ?? this.chatModel;
    const response = await this.http.postJson('/api/chat', toOllamaChatBody(await this.withImageBytes(request), model, false, this.name), {
      signal: request.signal,
      onSent: request.onSent,
      model,
    });
    return fromOllamaChat(response.body, this.name, model);
  }

  /** NDJSON chunks: `message.content` deltas until the object with `done: true`. */
  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = request.model ?? this.chatModel;
    const response = await this.http.stream('POST', '/api/chat', toOllamaChatBody(await this.withImageBytes(request), model, true, this.name), {
      signal: request.signal,
      onSent: request.onSent,
      model,
      headers: { accept: 'application/x-ndjson' },
    });
    let toolCallCount = 0;
    for await (const line of readNdjson(response.body, this.name)) {
      if (!isObject(line)) {
        throw new InvalidResponseError(`${this.name}: upstream stream line is not an object`, { provider: this.name });
      }
      // A failure after the 200 arrives as an `{"error": ...}` line.
      if (line.error !== undefined) {
        throw new ProviderError(`${this.name}: upstream failed during the stream`, { provider: this.name });
      }
      if (isObject(line.message)) {
        const text = typeof line.message.content === 'string' ? line.message.content : '';
        // Ollama sends each tool call whole in one line; it becomes one delta carrying id, name and arguments.
        const calls = fromOllamaToolCalls(line.message.tool_calls, toolCallCount, this.name);
        const deltas = calls.map((call, offset) => ({ index: toolCallCount + offset, ...call }));
        toolCallCount += calls.length;
        if (text !== '' || deltas.length > 0) yield { done: false, text, ...(deltas.length > 0 ? { toolCalls: deltas } : {}) };
      }
      if (line.done === true) {
        yield {
          done: true,
          model: typeof line.model === 'string' ? line.model : model,
          finishReason: mapOllamaFinishReason(line.done_reason, toolCallCount > 0),
          usage: ollamaUsage(line),
        };
        return;
      }
    }
    throw new InvalidResponseError(`${this.name}: upstream stream ended before done`, { provider: this.name });
  }

  /** One `/api/embed` call with the whole batch as an array; vectors are checked, never reshaped. */
  async embed(request: EmbedRequest): Promise<EmbedResult> {
    if (request.inputs.length === 0) {
      throw new InvalidRequestError(`${this.name}: at least one input is required`, { provider: this.name });
    }
    const model = request.model ?? this.embeddingModel;
    const response = await this.http.postJson(
      '/api/embed',
      { model, input: request.inputs },
      { signal: request.signal, onSent: request.onSent, model },
    );
    const body = isObject(response.body) ? response.body : {};
    const inputTokens = numberOrUndefined(body.prompt_eval_count);
    return {
      embeddings: vectorsOf(body.embeddings, request.inputs.length, this.settings.embeddingDimensions, this.name),
      model: typeof body.model === 'string' ? body.model : model,
      usage: inputTokens !== undefined ? { inputTokens } : undefined,
    };
  }

  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    return (await this.pulledModels(signal)).map((id) => ({ id, provider: this.name }));
  }

  /** Healthy when the server answers and every configured model is pulled (`name` or `name:latest`). */
  healthCheck(): Promise<HealthResult> {
    return checkHealth(this, [...new Set([this.chatModel, this.embeddingModel])]);
  }

  async close(): Promise<void> {
    await Promise.all([this.http.close(), this.ownImages?.close()]);
  }

  private async pulledModels(signal?: AbortSignal): Promise<string[]> {
    const response = await this.http.getJson('/api/tags', { signal });
    const body = response.body;
    if (!isObject(body) || !Array.isArray(body.models)) {
      throw new InvalidResponseError(`${this.name}: upstream model list has no models`, { provider: this.name });
    }
    return body.models.flatMap((m) => (isObject(m) && typeof m.name === 'string' ? [m.name] : []));
  }
}

/** The shared checks, once the field is known to be a list. */
function vectorsOf(value: unknown, count: number, dimensions: number | undefined, provider: string): number[][] {
  if (!Array.isArray(value))
    throw new InvalidResponseError(`${provider}: upstream returned no embeddings`, { provider });
  return validateEmbeddings(value, count, dimensions, provider);
}
