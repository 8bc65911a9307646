/**
 * The one client over every registered provider: generation, embeddings, models, capabilities and
 * health. A model call runs through the stages of call-pipeline.ts (route, gate, attempt with retry, fall
 * back, measure and record: docs/architecture.md#the-call-path), once for every adapter (docs/decisions.md B2,
 * B6); adapters only speak their wire format. This class builds each call's request and composes the stages.
 */
import { InvalidRequestError, TollgateError } from '../errors';
import type {
  AiProvider,
  ChatMessage,
  GenerateRequest,
  HealthResult,
  ModelFeature,
  ModelInfo,
  NativeDialect,
  NativeRequest,
  ProviderCapabilities,
  ProviderKind,
  TokenUsage,
  ToolCall,
} from '../providers/ai-provider.interface';
import { BUILT_IN_SENSITIVE_KEYS, type ContextItem, redactSensitive, renderContextItems } from '../prompts/context-rendering';
import { buildMessages, templatesFor } from '../prompts/prompt-templates';
import type { AiClientOptions } from './ai-client.options';
import { answeredBy, chatGate, type GateRequest } from './call-admission';
import { configuredModel, hasFeature, requiredFeatures } from './call-features';
import { CallPipeline } from './call-pipeline';
import { CallRecorder } from './call-recording';
import { DeploymentChooser } from './deployment-choice';
import { DEFAULT_COOLDOWN_POLICY, DeploymentHealth, type DeploymentState } from './deployment-health';
import { checkMessages } from './message-checks';
import { estimateTokens, messageChars, type ModelCallSink, toolCallChars } from './model-call';
import type { ClientInstrumentation } from './client-instrumentation';
import type { ModelCallGate } from './model-call-gate';
import type { ProviderRegistry } from './provider-registry';
import { type ModelRoute, ModelRouter } from './model-routing';
import { RedisCooldowns } from './redis-cooldowns';
import { RetriedAttempts, type RetrySeams } from './retried-attempt';
import type { AttemptOptions } from './sent-attempts';
import { type EventSink, ServiceRequestPublisher } from './service-request.events';
import { abortable, SharedAnswers } from './shared-answers';
import { type GenerateStreamEvent, relayStream } from './stream-relay';

export type { GenerateStreamEvent } from './stream-relay';

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

/** One deployment of an alias with deployments, as /readyz, `tollgate providers --health` and /metrics show it. */
export interface DeploymentStatus {
  alias: string;
  strategy: string;
  /** `registration/model`. */
  deployment: string;
  weight: number;
  state: DeploymentState;
  /** Seconds until a cooling deployment takes traffic again (its probe). */
  retryAfterSeconds?: number;
  recentFailures: number;
  inFlight: number;
  /** Moving average of the time to first token, ms, once measured. */
  latencyMs?: number;
}

/** Test seams: the wait between retries and the jitter source. */
export type AiClientHooks = RetrySeams;

export class AiClient {
  private readonly publisher: ServiceRequestPublisher;
  private readonly router: ModelRouter;
  private readonly pipeline: CallPipeline;
  private readonly recorder = new CallRecorder();
  private readonly attempts: RetriedAttempts;
  /** Health results and model listings per provider, shared by every caller for `healthCacheMs`. */
  private readonly answers: SharedAnswers;
  private readonly chooser?: DeploymentChooser;

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly options: AiClientOptions,
    events?: EventSink,
    hooks: AiClientHooks = {},
  ) {
    if (registry.names().length > 0) registry.get(options.defaultProvider);
    for (const name of options.fallback.providers ?? []) registry.get(name);
    this.publisher = new ServiceRequestPublisher(events);
    this.router = new ModelRouter(registry, options.defaultProvider, options.modelAliases);
    this.attempts = new RetriedAttempts(this.publisher, options.retry, hooks);
    const groups = this.router.deploymentGroups();
    if (groups.length > 0) {
      const settings = options.deployments;
      const keys = [...new Set(groups.flatMap((group) => group.deployments.map((deployment) => deployment.key)))];
      const shared = settings?.redisUrl ? new RedisCooldowns(settings.redisUrl, settings.keyPrefix) : undefined;
      this.chooser = new DeploymentChooser(new DeploymentHealth(settings?.cooldown ?? DEFAULT_COOLDOWN_POLICY, keys, shared), settings?.waitMs ?? 0);
    }
    this.pipeline = new CallPipeline(registry, this.router, options.fallback, this.attempts, this.chooser);
    this.answers = new SharedAnswers(options.healthCacheMs);
  }

  private get gate(): ModelCallGate | undefined {
    return this.pipeline.gate;
  }

  /** Which provider and model a call with these options goes to, and its fallback equivalents; throws `model_not_found`. */
  routeModel(options: { provider?: string; model?: string }): ModelRoute {
    return this.router.route(options.provider, options.model);
  }

  /** Whether the model routes to a provider that takes a body of `dialect` as written (docs/decisions.md B16, B19). */
  routesNative(dialect: NativeDialect, options: { provider?: string; model?: string }): boolean {
    const { target } = this.router.route(options.provider, options.model);
    return this.registry.get(target.provider).speaksNative?.(dialect, target.model) === true;
  }

  /**
   * The upstream's own count of a request in a provider's dialect, when the model routes to a provider that
   * speaks the dialect and counts (Anthropic's count_tokens); undefined otherwise, for the surface to estimate.
   * Counted against the caller's RPM as a listing is; it spends no budget (providers do not bill a count).
   */
  async countNativeTokens(model: string, native: NativeRequest, signal?: AbortSignal): Promise<Record<string, unknown> | undefined> {
    const { target } = this.router.route(undefined, model);
    const provider = this.registry.get(target.provider);
    if (!provider.countNativeTokens || provider.speaksNative?.(native.dialect, target.model) !== true) return undefined;
    await this.gate?.countRequest?.();
    return provider.countNativeTokens({ native, model: target.model, signal });
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
    this.recorder.sink = sink;
  }

  /** Puts `instrumentation` around every provider and the gate set so far (tracing: docs/operations.md#traces). */
  instrument(instrumentation: ClientInstrumentation): void {
    this.registry.decorate((provider) => instrumentation.provider(provider));
    if (this.pipeline.gate) this.pipeline.gate = instrumentation.gate(this.pipeline.gate);
  }

  /** Governance's allow-list and budget check before every call (docs/governance.md#enforcement). */
  setModelCallGate(gate: ModelCallGate | undefined): void {
    this.pipeline.gate = gate;
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
    const { result, provider, ticket, attempts, deployment } = await this.pipeline.run({
      capability: 'generate',
      operation: 'generate',
      options,
      call: (candidate, model, attempt) => {
        sent = generateRequest(options, messagesFor(candidate), model, attempt);
        return this.recorder.generate(candidate, sent);
      },
      features: requiredFeatures(options, callerMessages),
      native: options.native,
      gated,
    });
    if (deployment) this.pipeline.finished(deployment, totalTokens(result.usage), false);
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
    return this.answers.remembered(`health:${provider.name}`, () =>
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

  /** {@link deploymentStatus} once the cool-downs other processes shared were read (for a process that just started). */
  async sharedDeploymentStatus(): Promise<DeploymentStatus[]> {
    await this.chooser?.health.loaded;
    return this.deploymentStatus();
  }

  /** The deployments of every alias that has them: state, cool-down, calls in flight, latency (empty without such aliases). */
  deploymentStatus(): DeploymentStatus[] {
    const chooser = this.chooser;
    if (!chooser) return [];
    const now = Date.now();
    return this.router.deploymentGroups().flatMap((group) =>
      group.deployments.map((deployment) => {
        const health = chooser.health.status(deployment.key);
        return {
          alias: group.alias,
          strategy: group.strategy,
          deployment: deployment.key,
          weight: deployment.settings.weight,
          state: health.state,
          ...(health.state === 'cooling' ? { retryAfterSeconds: Math.max(1, Math.ceil((health.coolingUntil - now) / 1000)) } : {}),
          recentFailures: health.recentFailures,
          inFlight: deployment.inFlight,
          ...(deployment.latencyMs !== undefined ? { latencyMs: Math.round(deployment.latencyMs * 10) / 10 } : {}),
        };
      }),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.registry.close(), this.chooser?.health.close()]);
  }

  private async *streamWith(
    options: GenerateOptions,
    messagesFor: (candidate: AiProvider) => ChatMessage[],
    callerMessages: readonly ChatMessage[] = [],
  ): AsyncGenerator<GenerateStreamEvent> {
    let sent: GenerateRequest | undefined;
    const gated = this.gate ? chatGate('stream', options, messagesFor) : undefined;
    const { result, provider, ...admission } = await this.pipeline.run({
      capability: 'streaming',
      operation: 'generate',
      options,
      call: (candidate, model, attempt) => {
        sent = generateRequest(options, messagesFor(candidate), model, attempt);
        return this.recorder.open(candidate, sent);
      },
      features: requiredFeatures(options, callerMessages),
      native: options.native,
      gated,
    });
    const { deployment } = admission;
    const onEnd = deployment ? (usage: TokenUsage | undefined) => this.pipeline.finished(deployment, totalTokens(usage), true) : undefined;
    yield* relayStream({ opened: result, provider, sent, admission, sink: this.recorder.sink, signal: options.signal, onEnd });
  }

  private async embed(texts: readonly string[], options: EmbeddingOptions): Promise<BatchEmbeddingResponse> {
    const sentChars = this.gate ? texts.reduce((sum, text) => sum + text.length, 0) : 0;
    const gated: GateRequest | undefined = this.gate ? { operation: 'embed', setting: 'embeddingModel', inputTokens: () => estimateTokens(sentChars) } : undefined;
    const { result, provider, ticket, attempts, deployment } = await this.pipeline.run({
      capability: 'embeddings',
      operation: 'embed',
      options,
      call: (candidate, model, attempt) => this.recorder.embed(candidate, { inputs: [...texts], model, signal: options.signal, onSent: attempt.onSent }),
      gated,
    });
    if (deployment) this.pipeline.finished(deployment, totalTokens(result.usage), false);
    if (ticket && attempts) ticket.close(attempts.outcome(answeredBy(provider, result.model, result.usage, sentChars, 0)));
    return {
      embeddings: result.embeddings,
      provider: provider.name,
      model: result.model,
      dimensions: result.embeddings[0].length,
      ...(result.usage ? { usage: result.usage } : {}),
    };
  }

  private providerModels(provider: AiProvider): Promise<ModelInfo[]> {
    return this.answers.remembered(`models:${provider.name}`, () => this.attempts.run(provider, 'list_models', undefined, () => provider.listModels()));
  }
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

/** The tokens an upstream reported for a call, for a deployment's known TPM. */
function totalTokens(usage: TokenUsage | undefined): number | undefined {
  if (!usage) return undefined;
  return usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
}
