/**
 * The one client over every registered provider: generation, embeddings, models, capabilities and
 * health. Retries, fallback and `service.request` events live here, once, for every adapter
 * (docs/decisions.md B2, B6); adapters only speak their wire format.
 */
import { AsyncResource } from 'node:async_hooks';
import {
  CapabilityNotSupportedError,
  ConnectionError,
  InvalidRequestError,
  InvalidResponseError,
  isFallbackEligible,
  TollgateError,
} from '../errors';
import type {
  AiProvider,
  ChatMessage,
  EmbedRequest,
  EmbedResult,
  GenerateRequest,
  GenerateResult,
  GenerateStreamChunk,
  HealthResult,
  ModelFeature,
  ModelInfo,
  NativeEvent,
  ProviderCapabilities,
  ProviderKind,
  TokenUsage,
  ToolCall,
  ToolCallDelta,
} from '../providers/ai-provider.interface';
import { BUILT_IN_SENSITIVE_KEYS, type ContextItem, redactSensitive, renderContextItems } from '../prompts/context-rendering';
import { buildMessages, templatesFor } from '../prompts/prompt-templates';
import type { AiClientOptions } from './ai-client.options';
import type { ClientInstrumentation } from './client-instrumentation';
import { estimateTokens, measuredUsage, messageChars, type ModelCallOperation, type ModelCallSink, type ModelCallStatus, requestInputTokens, toolCallChars } from './model-call';
import type { GatedCall, GateOutcome, GateTicket, ModelCallGate } from './model-call-gate';
import type { ProviderRegistry } from './provider-registry';
import { type ModelRoute, ModelRouter, type ModelTarget } from './model-routing';
import { callWithRetry, type Sleep } from './retry';
import { type AttemptOptions, SentAttempts } from './sent-attempts';
import { type EventSink, publishProviderFallback, type ServiceOperation, ServiceRequestPublisher } from './service-request.events';

export interface CallOptions {
  /** Registration name; the default provider when omitted. */
  provider?: string;
  /** `false` turns fallback off for this call (the REST body's `enable_fallback`). */
  enableFallback?: boolean;
  signal?: AbortSignal;
}

/** The request fields beyond messages that an adapter translates, as GenerateRequest names them. */
export type GenerationParameters = Pick<
  GenerateRequest,
  | 'maxTokens'
  | 'temperature'
  | 'topP'
  | 'stop'
  | 'tools'
  | 'toolChoice'
  | 'parallelToolCalls'
  | 'responseFormat'
  | 'seed'
  | 'frequencyPenalty'
  | 'presencePenalty'
  | 'topK'
  | 'topKOptional'
  | 'native'
>;

export interface GenerateOptions extends CallOptions, GenerationParameters {
  /**
   * An alias, `provider/model`, or a model a provider's configuration names (docs/decisions.md B13); without
   * it, the named (or default) provider's configured model, and fallback uses each candidate's own.
   */
  model?: string;
  /** Replaces the configured system prompt for this call. */
  systemPrompt?: string;
}

export interface EmbeddingOptions extends CallOptions {
  /** As {@link GenerateOptions.model}. */
  model?: string;
}

export interface GenerateResponse {
  response: string;
  /** The provider that actually answered (differs from the requested one after a fallback). */
  provider: string;
  model: string;
  finishReason?: string;
  usage?: TokenUsage;
  toolCalls?: ToolCall[];
  /** The upstream's own answer, when the call went in its native dialect (GenerateOptions.native). */
  native?: Record<string, unknown>;
}

/**
 * What a streamed generation yields: text and tool-call deltas, then exactly one `done` naming who answered;
 * `native` carries the upstream's own events when the call went in its dialect.
 */
export type GenerateStreamEvent =
  | { type: 'delta'; text: string; toolCalls?: ToolCallDelta[]; native?: NativeEvent[] }
  | { type: 'done'; provider: string; model: string; finishReason?: string; usage?: TokenUsage; native?: NativeEvent[] };

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
  /** The upstream's usage report, when it sent one (the ledger's figures for the call). */
  usage?: TokenUsage;
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

export class AiClient {
  private readonly publisher: ServiceRequestPublisher;
  private readonly router: ModelRouter;
  /** Health results and model listings per provider, shared by every caller for `healthCacheMs` (see {@link remembered}). */
  private readonly answers = new Map<string, { at: number; answer: Promise<unknown> }>();
  private modelCallSink?: ModelCallSink;
  private gate?: ModelCallGate;

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly options: AiClientOptions,
    events?: EventSink,
    private readonly hooks: AiClientHooks = {},
  ) {
    if (registry.names().length > 0) registry.get(options.defaultProvider);
    for (const name of options.fallback.providers ?? []) registry.get(name);
    this.publisher = new ServiceRequestPublisher(events);
    this.router = new ModelRouter(registry, options.defaultProvider, options.modelAliases);
  }

  /** Which provider and model a call with these options goes to, and its fallback equivalents; throws `model_not_found`. */
  routeModel(options: { provider?: string; model?: string }): ModelRoute {
    return this.router.route(options.provider, options.model);
  }

  /** Whether the registration's configuration names `model` (its chat or embedding model, or its `models`). */
  servesModel(provider: string, model: string): boolean {
    return this.router.servesModel(provider, model);
  }

  /**
   * Whether the call gate lets the current caller use `model` of the registered `provider` (governance's
   * allow-lists and, for a caller held to dollars, the model's price, read from the request's call context), so
   * model listings show a caller only what it may call. True without a gate.
   */
  admitsModel(provider: string, model: string): boolean {
    const gate = this.gate;
    return gate ? gate.admits(provider, model, this.registry.get(provider).kind) : true;
  }

  /** Whether the current caller may use the alias: the gate admits at least one of its targets. */
  admitsAlias(alias: string): boolean {
    return (this.router.aliasTargets(alias) ?? []).some((target) =>
      this.admitsModel(target.provider, configuredModel(this.registry.get(target.provider), target.model, 'chatModel')),
    );
  }

  /**
   * What a model listing shows the current caller, on every surface: each provider's models and then the aliases
   * its allow-lists admit, from the shared listing cache (counted against its RPM, as listModels is).
   */
  async admittedModels(signal?: AbortSignal): Promise<{ models: ModelInfo[]; aliases: string[] }> {
    const listing = await this.listModels(undefined, signal);
    return {
      models: listing.models.filter((model) => this.admitsModel(model.provider, model.id)),
      aliases: this.modelAliases()
        .map(({ alias }) => alias)
        .filter((alias) => this.admitsAlias(alias)),
    };
  }

  /** The configured aliases, each with its targets as `provider/model`. */
  modelAliases(): Array<{ alias: string; targets: string[] }> {
    return this.router.aliasNames().map((alias) => ({
      alias,
      targets: (this.router.aliasTargets(alias) ?? []).map((target) => `${target.provider}/${target.model}`),
    }));
  }

  /**
   * Where each model call's record goes (the governance ledger). Unset by default, and then no record is
   * built. Stream records are handed over in the context of the stream's first read, so an
   * AsyncLocalStorage call context set around the request reaches the sink even after a disconnect.
   */
  setModelCallSink(sink: ModelCallSink | undefined): void {
    this.modelCallSink = sink;
  }

  /** Governance's allow-list and budget check before every call (docs/governance.md#enforcement). */
  setModelCallGate(gate: ModelCallGate | undefined): void {
    this.gate = gate;
  }

  /** Puts `instrumentation` around every provider and the gate set so far (tracing: docs/operations.md#traces). */
  instrument(instrumentation: ClientInstrumentation): void {
    this.registry.decorate((provider) => instrumentation.provider(provider));
    if (this.gate) this.gate = instrumentation.gate(this.gate);
  }

  get defaultProvider(): string {
    return this.options.defaultProvider;
  }

  providerNames(): string[] {
    return this.registry.names();
  }

  /** Whether the named (or default) provider translates `feature` for `model` (its configured model when omitted). */
  supportsFeature(feature: ModelFeature, options: { provider?: string; model?: string } = {}): boolean {
    const { target } = this.router.route(options.provider, options.model);
    return hasFeature(this.registry.get(target.provider), feature, target.model);
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
    return this.generateWith(options, () => sent, messages);
  }

  /** One generation with retries, fallback and events; `messagesFor` builds each candidate's messages. */
  private async generateWith(
    options: GenerateOptions,
    messagesFor: (candidate: AiProvider) => ChatMessage[],
    callerMessages: readonly ChatMessage[] = [],
  ): Promise<GenerateResponse> {
    let sent: GenerateRequest | undefined;
    const gated = this.gate ? chatGate('generate', options, messagesFor) : undefined;
    const { result, provider, ticket, attempts } = await this.withFallback('generate', 'generate', options, (candidate, model, attempt) => {
      sent = generateRequest(options, messagesFor(candidate), model, attempt);
      return this.measuredGenerate(candidate, sent);
    }, requiredFeatures(options, callerMessages), gated);
    // The messages the answering candidate was sent: built once per attempt, not again for the settlement.
    if (ticket && attempts && sent) {
      ticket.close(attempts.outcome(answeredBy(provider, result.model, result.usage, messageChars(sent.messages), result.text.length + toolCallChars(result.toolCalls))));
    }
    return {
      response: result.text,
      provider: provider.name,
      model: result.model,
      ...(result.finishReason !== undefined ? { finishReason: result.finishReason } : {}),
      ...(result.usage !== undefined ? { usage: result.usage } : {}),
      ...(result.toolCalls?.length ? { toolCalls: result.toolCalls } : {}),
      ...(result.native !== undefined ? { native: result.native } : {}),
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
    yield* this.streamWith(options, () => [...prefix, ...messages], messages);
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

  /**
   * One provider's health (no retry, no fallback: it reports on exactly that provider), counted as one request
   * of the caller (the gate's countRequest) and reused for `healthCacheMs`.
   */
  async healthCheck(providerName?: string): Promise<HealthResult> {
    const provider = this.registry.get(providerName ?? this.options.defaultProvider);
    await this.gate?.countRequest?.();
    return this.providerHealth(provider);
  }

  /** Every provider's health, as one request of the caller. */
  async healthCheckAll(): Promise<HealthResult[]> {
    await this.gate?.countRequest?.();
    return this.cachedHealth();
  }

  /** Health of every provider, reused for `healthCacheMs` so readiness probes never fan out into provider calls. */
  cachedHealth(): Promise<HealthResult[]> {
    return Promise.all(this.registry.list().map((provider) => this.providerHealth(provider)));
  }

  private providerHealth(provider: AiProvider): Promise<HealthResult> {
    return this.remembered(`health:${provider.name}`, () =>
      this.publisher.track({ provider: provider.name, operation: 'health', attempt: 1 }, () => provider.healthCheck()),
    );
  }

  /**
   * Models of one provider (its failure is the caller's error), or of all (failures are listed, not fatal),
   * counted as one request of the caller and reused for `healthCacheMs`. `signal` ends the caller's wait, not
   * the listing other callers share.
   */
  async listModels(providerName?: string, signal?: AbortSignal): Promise<ModelListing> {
    const provider = providerName === undefined ? undefined : this.registry.get(providerName);
    await this.gate?.countRequest?.();
    if (provider) return { models: await abortable(this.providerModels(provider), signal), errors: [] };
    const providers = this.registry.list();
    const outcomes = await abortable(Promise.allSettled(providers.map((each) => this.providerModels(each))), signal);
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
    callerMessages: readonly ChatMessage[] = [],
  ): AsyncGenerator<GenerateStreamEvent> {
    let sent: GenerateRequest | undefined;
    const gated = this.gate ? chatGate('stream', options, messagesFor) : undefined;
    const { result, provider, ticket, attempts } = await this.withFallback('streaming', 'generate', options, (candidate, model, attempt) => {
      sent = generateRequest(options, messagesFor(candidate), model, attempt);
      return this.measuredOpen(candidate, sent);
    }, requiredFeatures(options, callerMessages), gated);
    const { rest } = result;
    const sink = this.modelCallSink;
    // Taken at the first read, so the record reaches the sink in the caller's context even from a disconnect.
    // An async scope of its own rather than AsyncLocalStorage.snapshot(), whose bind costs a deprecation wrapper per call on Node 20.
    const callerScope = sink ? new AsyncResource('TollgateModelStream') : undefined;
    let status: ModelCallStatus = 'aborted';
    let receivedChars = 0;
    let last: GenerateStreamChunk | undefined;
    try {
      let chunk = result.first;
      while (!chunk.done) {
        if (sink || ticket) receivedChars += chunk.text.length + toolCallChars(chunk.toolCalls);
        const delta: GenerateStreamEvent = chunk.toolCalls?.length ? { type: 'delta', text: chunk.text, toolCalls: chunk.toolCalls } : { type: 'delta', text: chunk.text };
        if (chunk.native) delta.native = chunk.native;
        yield delta;
        const next = await rest.next();
        if (next.done) throw new InvalidResponseError(`${provider.name}: upstream stream ended without a completion marker`, { provider: provider.name });
        chunk = next.value;
      }
      last = chunk;
      status = 'ok';
      yield {
        type: 'done',
        provider: provider.name,
        model: chunk.model,
        ...(chunk.finishReason !== undefined ? { finishReason: chunk.finishReason } : {}),
        ...(chunk.usage !== undefined ? { usage: chunk.usage } : {}),
        ...(chunk.native ? { native: chunk.native } : {}),
      };
    } catch (error) {
      if (!options.signal?.aborted) status = 'error';
      throw error;
    } finally {
      try {
        // Ends the upstream request when the consumer stops early; a no-op once the adapter has finished.
        await rest.return?.();
      } finally {
        if (sent && (sink || ticket)) {
          const request = sent;
          const model = last?.done ? last.model : configuredModel(provider, request.model, 'chatModel');
          const usage = last?.done ? last.usage : undefined;
          if (sink && callerScope) callerScope.runInAsyncScope(() => this.recordCall(sink, provider, model, 'stream', status, usage, messageChars(request.messages), receivedChars));
          // A stream stopped before its end still cost what the upstream read and wrote: at least the estimate.
          if (ticket && attempts) {
            const answered = answeredBy(provider, model, usage, messageChars(request.messages), receivedChars);
            ticket.close(last?.done ? attempts.outcome(answered) : attempts.outcome(undefined, { provider: provider.name, providerKind: provider.kind, model, measured: answered.usage }));
          }
        }
      }
    }
  }

  /** One generation attempt, recorded when a sink is set. */
  private async measuredGenerate(provider: AiProvider, request: GenerateRequest): Promise<GenerateResult> {
    const sink = this.modelCallSink;
    if (!sink) return provider.generate(request);
    try {
      const result = await provider.generate(request);
      const received = result.text.length + toolCallChars(result.toolCalls);
      this.recordCall(sink, provider, result.model, 'generate', 'ok', result.usage, messageChars(request.messages), received);
      return result;
    } catch (error) {
      this.recordFailure(sink, provider, configuredModel(provider, request.model, 'chatModel'), 'generate', error, request.signal, messageChars(request.messages));
      throw error;
    }
  }

  /** Opening one stream attempt: only a failure is recorded here; a stream that opened is recorded when it ends. */
  private async measuredOpen(provider: AiProvider, request: GenerateRequest): Promise<OpenedStream> {
    const sink = this.modelCallSink;
    if (!sink) return openStream(provider, request);
    try {
      return await openStream(provider, request);
    } catch (error) {
      this.recordFailure(sink, provider, configuredModel(provider, request.model, 'chatModel'), 'stream', error, request.signal, messageChars(request.messages));
      throw error;
    }
  }

  private async measuredEmbed(provider: AiProvider, request: EmbedRequest): Promise<EmbedResult> {
    const sink = this.modelCallSink;
    if (!sink) return provider.embed(request);
    const sentChars = request.inputs.reduce((sum, text) => sum + text.length, 0);
    try {
      const result = await provider.embed(request);
      this.recordCall(sink, provider, result.model, 'embed', 'ok', result.usage, sentChars, 0);
      return result;
    } catch (error) {
      this.recordFailure(sink, provider, configuredModel(provider, request.model, 'embeddingModel'), 'embed', error, request.signal, sentChars);
      throw error;
    }
  }

  /**
   * A failed attempt: aborted by the caller (input estimated: the upstream may have read it), or an error the
   * upstream answered with (no tokens). A connection failure or a capability refusal never reached a model.
   */
  private recordFailure(
    sink: ModelCallSink,
    provider: AiProvider,
    model: string,
    operation: ModelCallOperation,
    error: unknown,
    signal: AbortSignal | undefined,
    sentChars: number,
  ): void {
    if (signal?.aborted) {
      this.recordCall(sink, provider, model, operation, 'aborted', undefined, sentChars, 0);
      return;
    }
    if (error instanceof ConnectionError || error instanceof CapabilityNotSupportedError) return;
    this.recordCall(sink, provider, model, operation, 'error', { inputTokens: 0, outputTokens: 0 }, 0, 0);
  }

  private recordCall(
    sink: ModelCallSink,
    provider: AiProvider,
    model: string,
    operation: ModelCallOperation,
    status: ModelCallStatus,
    reported: TokenUsage | undefined,
    sentChars: number,
    receivedChars: number,
  ): void {
    const { usage, estimated } = measuredUsage(reported, sentChars, receivedChars);
    // A failing sink must not turn a model call into a failure.
    try {
      sink({ provider: provider.name, providerKind: provider.kind, model, operation, status, usage, estimated });
    } catch {
      // The sink owns its errors.
    }
  }

  private async embed(texts: readonly string[], options: EmbeddingOptions): Promise<BatchEmbeddingResponse> {
    const sentChars = this.gate ? texts.reduce((sum, text) => sum + text.length, 0) : 0;
    const gated: GateRequest | undefined = this.gate ? { operation: 'embed', setting: 'embeddingModel', inputTokens: () => estimateTokens(sentChars) } : undefined;
    const { result, provider, ticket, attempts } = await this.withFallback('embeddings', 'embed', options, (candidate, model, attempt) =>
      this.measuredEmbed(candidate, { inputs: [...texts], model, signal: options.signal, onSent: attempt.onSent }),
    [], gated);
    if (ticket && attempts) ticket.close(attempts.outcome(answeredBy(provider, result.model, result.usage, sentChars, 0)));
    return {
      embeddings: result.embeddings,
      provider: provider.name,
      model: result.model,
      dimensions: result.embeddings[0].length,
      ...(result.usage ? { usage: result.usage } : {}),
    };
  }

  /**
   * Tries the routed provider (with retries), then, on a fallback-eligible error, each candidate that has
   * the capability: the route's equivalents, or the configured fallback providers when the caller named no
   * model. A candidate's own failure of any kind moves on to the next; when every one fails, the first
   * provider's error is the one reported. A gated call's attempts are watched for going upstream
   * (SentAttempts), and sent the max_tokens its budget bounds it to.
   */
  private async withFallback<T>(
    capability: Capability,
    operation: ServiceOperation,
    options: CallOptions & { model?: string },
    call: (provider: AiProvider, model: string | undefined, attempt: AttemptOptions) => Promise<T>,
    features: readonly ModelFeature[] = [],
    gated?: GateRequest,
  ): Promise<{ result: T; provider: AiProvider; ticket?: GateTicket; attempts?: SentAttempts }> {
    const route = this.router.route(options.provider, options.model);
    const primary = this.registry.get(route.target.provider);
    const requestedModel = route.target.model;
    if (!primary.capabilities[capability]) {
      throw new CapabilityNotSupportedError(`${primary.name}: ${primary.kind} does not support ${capabilityLabel(capability)}`, {
        provider: primary.name,
      });
    }
    const missing = features.find((feature) => !hasFeature(primary, feature, requestedModel));
    if (missing !== undefined) {
      const model = requestedModel ?? primary.describe().chatModel;
      throw new CapabilityNotSupportedError(
        `${primary.name}: ${primary.kind}${typeof model === 'string' ? ` model ${model}` : ''} does not support ${FEATURE_LABELS[missing]}`,
        { provider: primary.name },
      );
    }
    const gate = this.gate;
    const opened = gate && gated ? gate.open(gatedCall(primary, requestedModel, gated)) : undefined;
    const ticket = opened instanceof Promise ? await opened : opened;
    const attempts = ticket && gated ? new SentAttempts(ticket.maxOutputTokens, (provider, model) => configuredModel(provider, model, gated.setting)) : undefined;
    const attempt = (provider: AiProvider, model: string | undefined): Promise<T> =>
      attempts ? attempts.run(provider, model, options.signal, (sending) => call(provider, model, sending)) : call(provider, model, UNGATED_ATTEMPT);
    try {
      return { result: await this.retrying(primary, operation, options.signal, () => attempt(primary, requestedModel)), provider: primary, ticket, attempts };
    } catch (error) {
      if (options.enableFallback === false || !this.options.fallback.enabled || !isFallbackEligible(error)) {
        if (ticket && attempts) ticket.close(attempts.outcome());
        throw error;
      }
      for (const { provider: candidate, model } of this.fallbackCandidates(route, capability, features)) {
        if (options.signal?.aborted) break;
        if (gate && gated && !gate.admits(candidate.name, configuredModel(candidate, model, gated.setting), candidate.kind)) continue;
        publishProviderFallback(primary.name, candidate.name, operation);
        try {
          return { result: await this.retrying(candidate, operation, options.signal, () => attempt(candidate, model)), provider: candidate, ticket, attempts };
        } catch {
          // Any failure of a fallback candidate moves on to the next one (docs/decisions.md B2).
        }
      }
      if (ticket && attempts) ticket.close(attempts.outcome());
      throw error;
    }
  }

  /** Candidates with the capability and every feature the request needs, judged on the model each would be asked for. */
  private fallbackCandidates(route: ModelRoute, capability: Capability, features: readonly ModelFeature[]): Array<{ provider: AiProvider; model?: string }> {
    const targets: ModelTarget[] =
      route.equivalents ??
      (this.options.fallback.providers ?? this.registry.names()).filter((name) => name !== route.target.provider).map((name) => ({ provider: name }));
    return targets
      .map((target) => ({ provider: this.registry.get(target.provider), model: target.model }))
      .filter(({ provider, model }) => provider.capabilities[capability] && features.every((feature) => hasFeature(provider, feature, model)));
  }

  private providerModels(provider: AiProvider): Promise<ModelInfo[]> {
    return this.remembered(`models:${provider.name}`, () => this.retrying(provider, 'list_models', undefined, () => provider.listModels()));
  }

  /**
   * One answer per key for `healthCacheMs`, shared by every caller from the moment it is asked (concurrent
   * callers wait for the same upstream call): listings and health reports call every provider, and a caller
   * must not turn its requests into that many upstream calls. A failure is reused too, for the same time.
   */
  private remembered<T>(key: string, fetch: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const known = this.answers.get(key);
    if (known && now - known.at < this.options.healthCacheMs) return known.answer as Promise<T>;
    const answer = fetch();
    // The reuse must not leave an unhandled rejection when no caller is waiting any more.
    answer.catch(() => undefined);
    this.answers.set(key, { at: now, answer });
    return answer;
  }

  private retrying<T>(provider: AiProvider, operation: ServiceOperation, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    return callWithRetry(
      (attempt) => this.publisher.track({ provider: provider.name, operation, attempt }, call),
      this.options.retry,
      { sleep: this.hooks.sleep, random: this.hooks.random, signal },
    );
  }
}

const FEATURE_LABELS: Readonly<Record<ModelFeature, string>> = {
  tools: 'tool calling',
  structuredOutput: 'structured output (response_format)',
  vision: 'image input',
};

/** `answer`, or the signal's reason once the caller aborts: the caller stops waiting, the shared work goes on. */
function abortable<T>(answer: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return answer;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function hasFeature(provider: AiProvider, feature: ModelFeature, model: string | undefined): boolean {
  return provider.supportsFeature ? provider.supportsFeature(feature, model) : provider.capabilities[feature];
}

/**
 * What the request needs beyond text: a provider without it is refused (or skipped by fallback), never sent
 * the request with the field dropped. `messages` are the caller's own (templated prompts are text only).
 */
function requiredFeatures(options: GenerateOptions, messages: readonly ChatMessage[]): ModelFeature[] {
  const features: ModelFeature[] = [];
  const toolTurns = messages.some((message) => message.role === 'tool' || (message.role === 'assistant' && message.toolCalls?.length));
  if (options.tools?.length || options.toolChoice !== undefined || toolTurns) features.push('tools');
  if (options.responseFormat !== undefined && options.responseFormat.type !== 'text') features.push('structuredOutput');
  const images = messages.some(
    (message) => message.role === 'user' && Array.isArray(message.content) && message.content.some((part) => part.type === 'image'),
  );
  if (images) features.push('vision');
  return features;
}

function capabilityLabel(capability: Capability): string {
  if (capability === 'streaming') return 'streaming generation';
  return capability === 'embeddings' ? 'embeddings' : 'text generation';
}

function checkMessages(messages: unknown): asserts messages is ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidRequestError('messages must be a non-empty array');
  messages.forEach((message: unknown, index) => {
    if (!message || typeof message !== 'object') throw new InvalidRequestError(`messages[${index}] must be an object`);
    const problem = messageProblem(message as Record<string, unknown>);
    if (problem !== undefined) throw new InvalidRequestError(`messages[${index}]${problem}`);
  });
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** What is wrong with one message, as a path suffix and a phrase (`.content must be a string`). */
function messageProblem(message: Record<string, unknown>): string | undefined {
  const { role, content } = message;
  switch (role) {
    case 'system':
      return typeof content === 'string' ? undefined : '.content must be a string';
    case 'user':
      if (typeof content === 'string') return undefined;
      if (!Array.isArray(content) || content.length === 0) return '.content must be a string or a non-empty array of parts';
      for (const [index, part] of content.entries()) {
        const problem = partProblem(part);
        if (problem !== undefined) return `.content[${index}]${problem}`;
      }
      return undefined;
    case 'assistant': {
      const calls = message.toolCalls;
      if (calls !== undefined) {
        if (!Array.isArray(calls)) return '.toolCalls must be an array';
        for (const [index, call] of calls.entries()) {
          const { id, name, arguments: args } = (call ?? {}) as Record<string, unknown>;
          if (!nonEmptyString(id) || !nonEmptyString(name) || typeof args !== 'string') {
            return `.toolCalls[${index}] must have a non-empty id and name and arguments as JSON text`;
          }
        }
      }
      if (typeof content === 'string') return undefined;
      return content === null && Array.isArray(calls) && calls.length > 0 ? undefined : '.content must be a string (null only beside toolCalls)';
    }
    case 'tool':
      if (!nonEmptyString(message.toolCallId)) return '.toolCallId must name the tool call this message answers';
      return typeof content === 'string' ? undefined : '.content must be a string';
    default:
      return '.role must be one of system, user, assistant, tool';
  }
}

function partProblem(part: unknown): string | undefined {
  const { type, text, image } = (part ?? {}) as Record<string, unknown>;
  if (type === 'text') return typeof text === 'string' ? undefined : '.text must be a string';
  if (type !== 'image') return '.type must be text or image';
  const source = (image ?? {}) as Record<string, unknown>;
  if (source.kind === 'url') {
    return typeof source.url === 'string' && /^https?:\/\//i.test(source.url) ? undefined : '.image.url must be an http(s) URL';
  }
  if (source.kind === 'base64') {
    if (typeof source.mediaType !== 'string' || !/^image\/[\w.+-]+$/.test(source.mediaType)) return '.image.mediaType must be an image/* type';
    return nonEmptyString(source.data) ? undefined : '.image.data must be non-empty base64 text';
  }
  return ".image.kind must be 'url' or 'base64'";
}

/** The model a request names, else the registration's configured one. */
function configuredModel(provider: AiProvider, requested: string | undefined, setting: 'chatModel' | 'embeddingModel'): string {
  if (requested !== undefined) return requested;
  const configured = provider.describe()[setting];
  return typeof configured === 'string' ? configured : 'unknown';
}

/** What the gate is told about a call before it is made; `inputTokens` estimates what a provider would be sent. */
interface GateRequest {
  operation: ModelCallOperation;
  setting: 'chatModel' | 'embeddingModel';
  inputTokens: (provider: AiProvider) => number;
  maxOutputTokens?: number;
}

function chatGate(operation: ModelCallOperation, options: GenerateOptions, messagesFor: (provider: AiProvider) => ChatMessage[]): GateRequest {
  return { operation, setting: 'chatModel', inputTokens: (provider) => requestInputTokens(messagesFor(provider), options), maxOutputTokens: options.maxTokens };
}

/** An ungated call's attempts: nothing watches them go out, and the caller's max_tokens stands. */
const UNGATED_ATTEMPT: AttemptOptions = Object.freeze({});

function gatedCall(provider: AiProvider, model: string | undefined, gated: GateRequest): GatedCall {
  return {
    provider: provider.name,
    providerKind: provider.kind,
    model: configuredModel(provider, model, gated.setting),
    operation: gated.operation,
    estimateInputTokens: () => gated.inputTokens(provider),
    ...(gated.maxOutputTokens !== undefined ? { maxOutputTokens: gated.maxOutputTokens } : {}),
  };
}

/** What answered and what it cost: the upstream's figures, or (`estimated`) an estimate from the text. */
function answeredBy(provider: AiProvider, model: string, usage: TokenUsage | undefined, sentChars: number, receivedChars: number): NonNullable<GateOutcome['answered']> {
  const measured = measuredUsage(usage, sentChars, receivedChars);
  return { provider: provider.name, providerKind: provider.kind, model, usage: measured.usage, estimated: measured.estimated };
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

/**
 * One candidate's request, for the model routing chose for it (undefined: the provider's configured one), with
 * the max_tokens a budget bounds it to and where it reports going upstream.
 */
function generateRequest(options: GenerateOptions, messages: ChatMessage[], model: string | undefined, attempt: AttemptOptions): GenerateRequest {
  return {
    messages,
    model,
    maxTokens: attempt.maxTokens ?? options.maxTokens,
    temperature: options.temperature,
    topP: options.topP,
    stop: options.stop,
    tools: options.tools,
    toolChoice: options.toolChoice,
    parallelToolCalls: options.parallelToolCalls,
    responseFormat: options.responseFormat,
    seed: options.seed,
    frequencyPenalty: options.frequencyPenalty,
    presencePenalty: options.presencePenalty,
    topK: options.topK,
    topKOptional: options.topKOptional,
    native: options.native,
    signal: options.signal,
    onSent: attempt.onSent,
  };
}
