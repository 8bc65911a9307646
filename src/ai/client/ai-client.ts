/**
 * The one client over every registered provider: generation, embeddings, models, capabilities and
 * health. Retries, fallback and `service.request` events live here, once, for every adapter
 * (docs/decisions.md B2, B6); adapters only speak their wire format.
 */
import {
  CapabilityNotSupportedError,
  InvalidRequestError,
  InvalidResponseError,
  isFallbackEligible,
  TollgateError,
} from '../errors';
import type {
  AiProvider,
  ChatMessage,
  GenerateRequest,
  GenerateStreamChunk,
  HealthResult,
  ModelInfo,
  ProviderCapabilities,
  ProviderKind,
  TokenUsage,
} from '../providers/ai-provider.interface';
import { BUILT_IN_SENSITIVE_KEYS, type ContextItem, redactSensitive, renderContextItems } from '../prompts/context-rendering';
import { buildMessages, templatesFor } from '../prompts/prompt-templates';
import type { AiClientOptions } from './ai-client.options';
import type { ProviderRegistry } from './provider-registry';
import { callWithRetry, type Sleep } from './retry';
import { type EventSink, publishProviderFallback, type ServiceOperation, ServiceRequestPublisher } from './service-request.events';

export interface CallOptions {
  /** Registration name; the default provider when omitted. */
  provider?: string;
  /** `false` turns fallback off for this call (the REST body's `enable_fallback`). */
  enableFallback?: boolean;
  signal?: AbortSignal;
}

export interface GenerateOptions extends CallOptions {
  /** Model for the named (or default) provider; fallback providers use their own configured model. */
  model?: string;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  /** Replaces the configured system prompt for this call. */
  systemPrompt?: string;
}

export interface EmbeddingOptions extends CallOptions {
  /** Model for the named (or default) provider; fallback providers use their own configured model. */
  model?: string;
}

export interface GenerateResponse {
  response: string;
  /** The provider that actually answered (differs from the requested one after a fallback). */
  provider: string;
  model: string;
  finishReason?: string;
  usage?: TokenUsage;
}

/** What a streamed generation yields: text deltas, then exactly one `done` naming who answered. */
export type GenerateStreamEvent =
  | { type: 'delta'; text: string }
  | { type: 'done'; provider: string; model: string; finishReason?: string; usage?: TokenUsage };

export interface EmbeddingResponse {
  embedding: number[];
  provider: string;
  model: string;
  dimensions: number;
}

export interface BatchEmbeddingResponse {
  embeddings: number[][];
  provider: string;
  model: string;
  dimensions: number;
}

export interface ModelListing {
  models: ModelInfo[];
  /** Providers whose listing failed, with Tollgate's sanitized message. */
  errors: Array<{ provider: string; type: string; message: string }>;
}

export interface ProviderCapabilityInfo {
  provider: string;
  kind: ProviderKind;
  capabilities: ProviderCapabilities;
}

/** Test seams: the wait between retries and the jitter source. */
export interface AiClientHooks {
  sleep?: Sleep;
  random?: () => number;
}

type Capability = 'generate' | 'embeddings' | 'streaming';

/** A provider stream whose first chunk has arrived: the point after which no retry or fallback happens. */
interface OpenedStream {
  first: GenerateStreamChunk;
  rest: AsyncIterator<GenerateStreamChunk>;
}

const CHAT_ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant']);

export class AiClient {
  private readonly publisher: ServiceRequestPublisher;
  private healthCache?: { at: number; results: Promise<HealthResult[]> };

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly options: AiClientOptions,
    events?: EventSink,
    private readonly hooks: AiClientHooks = {},
  ) {
    if (registry.names().length > 0) registry.get(options.defaultProvider);
    for (const name of options.fallback.providers ?? []) registry.get(name);
    this.publisher = new ServiceRequestPublisher(events);
  }

  get defaultProvider(): string {
    return this.options.defaultProvider;
  }

  providerNames(): string[] {
    return this.registry.names();
  }

  /** Text generation with the prompt templates of whichever provider answers. */
  async generateResponse(prompt: string, contextItems: readonly ContextItem[] = [], options: GenerateOptions = {}): Promise<GenerateResponse> {
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new InvalidRequestError('prompt must be a non-empty string');
    const context = renderContextItems(contextItems, this.options.context);
    return this.generateWith(options, (candidate) => {
      const templates = templatesFor(this.options.prompts, candidate.name);
      if (options.systemPrompt !== undefined) templates.systemPrompt = options.systemPrompt;
      return buildMessages(templates, prompt, context);
    });
  }

  /**
   * Generation of `messages` as given, without prompt templates (`systemPrompt`, when set, goes first as a
   * system message); retries, fallback and events as {@link generateResponse}. The array is not copied.
   */
  async generateMessages(messages: ChatMessage[], options: GenerateOptions = {}): Promise<GenerateResponse> {
    checkMessages(messages);
    const sent: ChatMessage[] = options.systemPrompt !== undefined ? [{ role: 'system', content: options.systemPrompt }, ...messages] : messages;
    return this.generateWith(options, () => sent);
  }

  /** One generation with retries, fallback and events; `messagesFor` builds each candidate's messages. */
  private async generateWith(options: GenerateOptions, messagesFor: (candidate: AiProvider) => ChatMessage[]): Promise<GenerateResponse> {
    const { result, provider } = await this.withFallback('generate', 'generate', options, (candidate, primary) =>
      candidate.generate(generateRequest(options, messagesFor(candidate), primary)),
    );
    return {
      response: result.text,
      provider: provider.name,
      model: result.model,
      ...(result.finishReason !== undefined ? { finishReason: result.finishReason } : {}),
      ...(result.usage !== undefined ? { usage: result.usage } : {}),
    };
  }

  /**
   * Streamed generation of `messages` as given (`systemPrompt`, when set, goes first as a system message).
   * Retries, fallback and the `service.request` event all happen before the first event is yielded; after
   * it, a failure ends the stream with the usual TollgateError. Stopping the iteration, or `options.signal`,
   * ends the upstream request.
   */
  async *streamMessages(messages: ChatMessage[], options: GenerateOptions = {}): AsyncIterable<GenerateStreamEvent> {
    checkMessages(messages);
    const prefix: ChatMessage[] = options.systemPrompt !== undefined ? [{ role: 'system', content: options.systemPrompt }] : [];
    yield* this.streamWith(options, () => [...prefix, ...messages.map(({ role, content }) => ({ role, content }))]);
  }

  /** Streamed counterpart of {@link generateResponse}: same templates and context, events as {@link streamMessages}. */
  async *streamResponse(prompt: string, contextItems: readonly ContextItem[], options: GenerateOptions = {}): AsyncIterable<GenerateStreamEvent> {
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new InvalidRequestError('prompt must be a non-empty string');
    const context = renderContextItems(contextItems, this.options.context);
    yield* this.streamWith(options, (candidate) => {
      const templates = templatesFor(this.options.prompts, candidate.name);
      if (options.systemPrompt !== undefined) templates.systemPrompt = options.systemPrompt;
      return buildMessages(templates, prompt, context);
    });
  }

  async generateEmbedding(text: string, options: EmbeddingOptions = {}): Promise<EmbeddingResponse> {
    if (typeof text !== 'string' || text === '') throw new InvalidRequestError('input must be a non-empty string');
    const batch = await this.embed([text], options);
    return { embedding: batch.embeddings[0], provider: batch.provider, model: batch.model, dimensions: batch.dimensions };
  }

  /** One upstream call for the whole batch where the provider takes arrays. */
  async generateEmbeddings(texts: readonly string[], options: EmbeddingOptions = {}): Promise<BatchEmbeddingResponse> {
    const max = this.options.limits.maxBatchInputs;
    if (!Array.isArray(texts) || texts.length < 1 || texts.length > max) {
      throw new InvalidRequestError(`inputs must hold 1 to ${max} texts`);
    }
    const empty = texts.findIndex((text) => typeof text !== 'string' || text === '');
    if (empty !== -1) throw new InvalidRequestError(`inputs[${empty}] must be a non-empty string`);
    return this.embed(texts, options);
  }

  /** One provider's health (no retry, no fallback: it reports on exactly that provider). */
  healthCheck(providerName?: string): Promise<HealthResult> {
    const provider = this.registry.get(providerName ?? this.options.defaultProvider);
    return this.publisher.track({ provider: provider.name, operation: 'health', attempt: 1 }, () => provider.healthCheck());
  }

  healthCheckAll(): Promise<HealthResult[]> {
    return Promise.all(this.registry.names().map((name) => this.healthCheck(name)));
  }

  /** Health of every provider, reused for `healthCacheMs` so readiness probes never fan out into provider calls. */
  cachedHealth(): Promise<HealthResult[]> {
    const now = Date.now();
    if (!this.healthCache || now - this.healthCache.at >= this.options.healthCacheMs) {
      this.healthCache = { at: now, results: this.healthCheckAll() };
    }
    return this.healthCache.results;
  }

  /** Models of one provider (its failure is the caller's error), or of all (failures are listed, not fatal). */
  async listModels(providerName?: string, signal?: AbortSignal): Promise<ModelListing> {
    if (providerName !== undefined) {
      const provider = this.registry.get(providerName);
      return { models: await this.retrying(provider, 'list_models', signal, () => provider.listModels(signal)), errors: [] };
    }
    const providers = this.registry.list();
    const outcomes = await Promise.allSettled(
      providers.map((provider) => this.retrying(provider, 'list_models', signal, () => provider.listModels(signal))),
    );
    const listing: ModelListing = { models: [], errors: [] };
    outcomes.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') {
        listing.models.push(...outcome.value);
        return;
      }
      const { name } = providers[index];
      const error = outcome.reason;
      listing.errors.push(
        error instanceof TollgateError
          ? { provider: name, type: error.type, message: error.message }
          : { provider: name, type: 'internal_error', message: `${name}: model listing failed` },
      );
    });
    return listing;
  }

  capabilities(): ProviderCapabilityInfo[] {
    return this.registry.list().map((provider) => ({
      provider: provider.name,
      kind: provider.kind,
      capabilities: { ...provider.capabilities },
    }));
  }

  /** Provider settings for display: never a key, and nothing under a sensitive name (docs/decisions.md B4). */
  describeProviders(): Array<Record<string, unknown>> {
    const sensitive = [...BUILT_IN_SENSITIVE_KEYS, ...this.options.sensitiveKeys];
    return this.registry.list().map((provider) => ({
      ...(redactSensitive(provider.describe(), sensitive) as Record<string, unknown>),
      default: provider.name === this.options.defaultProvider,
    }));
  }

  close(): Promise<void> {
    return this.registry.close();
  }

  private async *streamWith(
    options: GenerateOptions,
    messagesFor: (candidate: AiProvider) => ChatMessage[],
  ): AsyncGenerator<GenerateStreamEvent> {
    const { result, provider } = await this.withFallback('streaming', 'generate', options, (candidate, primary) =>
      openStream(candidate, generateRequest(options, messagesFor(candidate), primary)),
    );
    const { rest } = result;
    try {
      let chunk = result.first;
      while (!chunk.done) {
        yield { type: 'delta', text: chunk.text };
        const next = await rest.next();
        if (next.done) throw new InvalidResponseError(`${provider.name}: upstream stream ended without a completion marker`, { provider: provider.name });
        chunk = next.value;
      }
      yield {
        type: 'done',
        provider: provider.name,
        model: chunk.model,
        ...(chunk.finishReason !== undefined ? { finishReason: chunk.finishReason } : {}),
        ...(chunk.usage !== undefined ? { usage: chunk.usage } : {}),
      };
    } finally {
      // Ends the upstream request when the consumer stops early; a no-op once the adapter has finished.
      await rest.return?.();
    }
  }

  private async embed(texts: readonly string[], options: EmbeddingOptions): Promise<BatchEmbeddingResponse> {
    const { result, provider } = await this.withFallback('embeddings', 'embed', options, (candidate, primary) =>
      candidate.embed({ inputs: [...texts], model: primary ? options.model : undefined, signal: options.signal }),
    );
    return { embeddings: result.embeddings, provider: provider.name, model: result.model, dimensions: result.embeddings[0].length };
  }

  /**
   * Tries the requested provider (with retries), then, on a fallback-eligible error, each candidate that has
   * the capability. A candidate's own failure of any kind moves on to the next; when every one fails, the
   * requested provider's error is the one reported.
   */
  private async withFallback<T>(
    capability: Capability,
    operation: ServiceOperation,
    options: CallOptions,
    call: (provider: AiProvider, primary: boolean) => Promise<T>,
  ): Promise<{ result: T; provider: AiProvider }> {
    const primary = this.registry.get(options.provider ?? this.options.defaultProvider);
    if (!primary.capabilities[capability]) {
      throw new CapabilityNotSupportedError(`${primary.name}: ${primary.kind} does not support ${capabilityLabel(capability)}`, {
        provider: primary.name,
      });
    }
    try {
      return { result: await this.retrying(primary, operation, options.signal, () => call(primary, true)), provider: primary };
    } catch (error) {
      if (options.enableFallback === false || !this.options.fallback.enabled || !isFallbackEligible(error)) throw error;
      for (const candidate of this.fallbackCandidates(primary, capability)) {
        if (options.signal?.aborted) break;
        publishProviderFallback(primary.name, candidate.name, operation);
        try {
          return { result: await this.retrying(candidate, operation, options.signal, () => call(candidate, false)), provider: candidate };
        } catch {
          // Any failure of a fallback candidate moves on to the next one (docs/decisions.md B2).
        }
      }
      throw error;
    }
  }

  private fallbackCandidates(primary: AiProvider, capability: Capability): AiProvider[] {
    const names = this.options.fallback.providers ?? this.registry.names();
    return names
      .filter((name) => name !== primary.name)
      .map((name) => this.registry.get(name))
      .filter((provider) => provider.capabilities[capability]);
  }

  private retrying<T>(provider: AiProvider, operation: ServiceOperation, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    return callWithRetry(
      (attempt) => this.publisher.track({ provider: provider.name, operation, attempt }, call),
      this.options.retry,
      { sleep: this.hooks.sleep, random: this.hooks.random, signal },
    );
  }
}

function capabilityLabel(capability: Capability): string {
  if (capability === 'streaming') return 'streaming generation';
  return capability === 'embeddings' ? 'embeddings' : 'text generation';
}

function checkMessages(messages: unknown): asserts messages is ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidRequestError('messages must be a non-empty array');
  messages.forEach((message: unknown, index) => {
    if (!message || typeof message !== 'object') throw new InvalidRequestError(`messages[${index}] must be an object`);
    const { role, content } = message as Record<string, unknown>;
    if (typeof role !== 'string' || !CHAT_ROLES.has(role)) {
      throw new InvalidRequestError(`messages[${index}].role must be one of system, user, assistant`);
    }
    if (typeof content !== 'string') throw new InvalidRequestError(`messages[${index}].content must be a string`);
  });
}

/** Reads up to the first chunk, so a failure to connect, a refusal or an empty stream counts as the attempt failing. */
async function openStream(provider: AiProvider, request: GenerateRequest): Promise<OpenedStream> {
  if (!provider.generateStream) {
    throw new CapabilityNotSupportedError(`${provider.name}: ${provider.kind} does not support streaming generation`, {
      provider: provider.name,
    });
  }
  const rest = provider.generateStream(request)[Symbol.asyncIterator]();
  const first = await rest.next();
  if (first.done) throw new InvalidResponseError(`${provider.name}: upstream stream ended without any chunk`, { provider: provider.name });
  return { first: first.value, rest };
}

/** One candidate's request: the primary gets the caller's model, a fallback uses its own default. */
function generateRequest(options: GenerateOptions, messages: ChatMessage[], primary: boolean): GenerateRequest {
  return {
    messages,
    model: primary ? options.model : undefined,
    maxTokens: options.maxTokens,
    temperature: options.temperature,
    topP: options.topP,
    stop: options.stop,
    signal: options.signal,
  };
}
