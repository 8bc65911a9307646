/**
 * Ollama adapter (local model server, no auth): `/api/chat` for generation (with `"stream": false`, or
 * NDJSON when streaming), `/api/embed` with an array input (one call per batch), `/api/tags` for the pulled
 * models. Ollama answers errors as `{"error": "..."}`; only the status is read from them.
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
  ModelInfo,
  ProviderCapabilities,
  ProviderSettings,
} from '../ai-provider.interface';
import { readNdjson } from '../../../upstream/stream-framing';
import { UpstreamClient } from '../../../upstream/upstream-client';
import {
  NO_MODEL_FEATURES,
  checkEmbeddingDimensions,
  checkHealth,
  describeSettings,
  textOnlyMessages,
  usageOf,
  validateEmbeddings,
} from '../provider-support';

export const OLLAMA_DEFAULT_URL = 'http://localhost:11434';
export const OLLAMA_DEFAULT_CHAT_MODEL = 'llama3.2';
export const OLLAMA_DEFAULT_EMBEDDING_MODEL = 'nomic-embed-text';

interface OllamaChatBody {
  model: string;
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  stream: boolean;
  options?: { num_predict?: number; temperature?: number; top_p?: number; stop?: string[] };
}

/** Ollama takes system messages inline; sampling settings go in `options`, sent only when given. */
function toOllamaChatBody(request: GenerateRequest, model: string, stream: boolean, provider: string): OllamaChatBody {
  if (!request.messages.some((m) => m.role !== 'system')) {
    throw new InvalidRequestError(`${provider}: at least one user or assistant message is required`, { provider });
  }
  const body: OllamaChatBody = {
    model,
    messages: textOnlyMessages(request.messages, provider),
    stream,
  };
  const options: NonNullable<OllamaChatBody['options']> = {};
  if (request.maxTokens !== undefined) options.num_predict = request.maxTokens;
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.topP !== undefined) options.top_p = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) options.stop = request.stop;
  if (Object.keys(options).length > 0) body.options = options;
  return body;
}

/** The final chat object counts prompt and answer tokens; the total is their sum. */
const USAGE_FIELDS = { input: 'prompt_eval_count', output: 'eval_count' };

function fromOllamaChat(body: unknown, provider: string, requestedModel: string): GenerateResult {
  if (!isObject(body) || !isObject(body.message) || typeof body.message.content !== 'string') {
    throw new InvalidResponseError(`${provider}: upstream chat response has no message content`, { provider });
  }
  return {
    text: body.message.content,
    model: typeof body.model === 'string' ? body.model : requestedModel,
    finishReason: typeof body.done_reason === 'string' ? body.done_reason : undefined,
    usage: usageOf(body, USAGE_FIELDS),
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
    ...NO_MODEL_FEATURES,
  };
  readonly name: string;
  private readonly http: UpstreamClient;
  private readonly url: string;
  private readonly chatModel: string;
  private readonly embeddingModel: string;

  constructor(private readonly settings: ProviderSettings) {
    this.name = settings.name;
    checkEmbeddingDimensions(settings);
    this.url = settings.url ?? OLLAMA_DEFAULT_URL;
    this.chatModel = settings.chatModel ?? OLLAMA_DEFAULT_CHAT_MODEL;
    this.embeddingModel = settings.embeddingModel ?? OLLAMA_DEFAULT_EMBEDDING_MODEL;
    // The default status mapping fits Ollama: 404 for a model that is not pulled, 5xx for server trouble.
    this.http = new UpstreamClient({ provider: settings.name, baseUrl: this.url, timeoutMs: settings.timeoutMs });
  }

  describe(): Record<string, unknown> {
    const { url, chatModel, embeddingModel } = this;
    return describeSettings({ ...this.settings, url, chatModel, embeddingModel }, this.capabilities);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const model = request.model ?? this.chatModel;
    const response = await this.http.postJson('/api/chat', toOllamaChatBody(request, model, false, this.name), {
      signal: request.signal,
      model,
    });
    return fromOllamaChat(response.body, this.name, model);
  }

  /** NDJSON chunks: `message.content` deltas until the object with `done: true`. */
  async *generateStream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const model = request.model ?? this.chatModel;
    const response = await this.http.stream('POST', '/api/chat', toOllamaChatBody(request, model, true, this.name), {
      signal: request.signal,
      model,
      headers: { accept: 'application/x-ndjson' },
    });
    for await (const line of readNdjson(response.body, this.name)) {
      if (!isObject(line)) {
        throw new InvalidResponseError(`${this.name}: upstream stream line is not an object`, { provider: this.name });
      }
      // A failure after the 200 arrives as an `{"error": ...}` line.
      if (line.error !== undefined) {
        throw new ProviderError(`${this.name}: upstream failed during the stream`, { provider: this.name });
      }
      if (isObject(line.message) && typeof line.message.content === 'string' && line.message.content !== '') {
        yield { done: false, text: line.message.content };
      }
      if (line.done === true) {
        yield {
          done: true,
          model: typeof line.model === 'string' ? line.model : model,
          finishReason: typeof line.done_reason === 'string' ? line.done_reason : undefined,
          usage: usageOf(line, USAGE_FIELDS),
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
      { signal: request.signal, model },
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

  close(): Promise<void> {
    return this.http.close();
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
