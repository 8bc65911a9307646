/**
 * One CLIENT span per upstream attempt (docs/operations.md#traces): a provider that wraps a registered one, so
 * each call the AiClient makes to it (each retry, each fallback candidate) is one span, made current while the
 * adapter sends its request (so the upstream gets its traceparent), with the GenAI semantic conventions'
 * attributes and metrics. Prompts and answers only with `captureContent`; keys and headers never.
 */
import { type Attributes, type Context, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { currentCallContext } from '../../governance/call-context';
import type {
  AiProvider,
  ChatMessage,
  EmbedRequest,
  EmbedResult,
  GenerateRequest,
  GenerateResult,
  GenerateStreamChunk,
  TokenUsage,
} from '../../ai/providers/ai-provider.interface';
import type { CallScopeContextManager } from './call-scope-context-manager';
import { GEN_AI, PROVIDER_NAMES, TOLLGATE } from './gen-ai-conventions';
import { type AnsweredMetricAttributes, type GenAiMetrics, MetricAttributeSets, type ModelMetricAttributes } from './gen-ai-metrics';

type Operation = 'chat' | 'embeddings';

export interface TracedProviderOptions {
  tracer: Tracer;
  /** The installed context manager, called directly rather than through the API's registry. */
  contexts: CallScopeContextManager;
  metrics?: GenAiMetrics;
  captureContent: boolean;
}

export function tracedProvider(inner: AiProvider, options: TracedProviderOptions): AiProvider {
  const attempts = new AttemptTracer(inner, options);
  const traced: AiProvider = {
    name: inner.name,
    kind: inner.kind,
    capabilities: inner.capabilities,
    describe: () => inner.describe(),
    generate: (request) => attempts.generate(request),
    embed: (request) => attempts.embed(request),
    listModels: (signal) => inner.listModels(signal),
    healthCheck: () => inner.healthCheck(),
    close: () => inner.close(),
  };
  if (inner.supportsFeature) traced.supportsFeature = (feature, model) => inner.supportsFeature!(feature, model);
  if (inner.generateStream) traced.generateStream = (request) => attempts.stream(request);
  return traced;
}

class AttemptTracer {
  private readonly providerName: string;
  private readonly server: Attributes;
  /** The registration's models, for attempts that name none (its settings do not change while it lives). */
  private readonly configured: Readonly<Record<Operation, string>>;
  private readonly metricAttributes: Readonly<Record<Operation, MetricAttributeSets>>;

  constructor(
    private readonly inner: AiProvider,
    private readonly options: TracedProviderOptions,
  ) {
    this.providerName = PROVIDER_NAMES[inner.kind] ?? inner.kind;
    const settings = inner.describe();
    this.server = serverAttributes(settings.url);
    const named = (value: unknown) => (typeof value === 'string' ? value : 'unknown');
    this.configured = { chat: named(settings.chatModel), embeddings: named(settings.embeddingModel) };
    this.metricAttributes = { chat: new MetricAttributeSets('chat', this.providerName), embeddings: new MetricAttributeSets('embeddings', this.providerName) };
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const attempt = this.start('chat', request.model, request);
    try {
      const result = await this.options.contexts.run(attempt.context, () => this.inner.generate(request));
      attempt.answered(result.model, result.usage, result.finishReason);
      if (this.options.captureContent) attempt.span.setAttribute(GEN_AI.outputMessages, outputMessages(result.text, result.finishReason));
      attempt.end();
      return result;
    } catch (error) {
      attempt.failed(error);
      throw error;
    }
  }

  async embed(request: EmbedRequest): Promise<EmbedResult> {
    const attempt = this.start('embeddings', request.model);
    try {
      const result = await this.options.contexts.run(attempt.context, () => this.inner.embed(request));
      attempt.answered(result.model, result.usage, undefined);
      if (result.embeddings[0]) attempt.span.setAttribute(GEN_AI.embeddingsDimensionCount, result.embeddings[0].length);
      attempt.end();
      return result;
    } catch (error) {
      attempt.failed(error);
      throw error;
    }
  }

  stream(request: GenerateRequest): AsyncIterable<GenerateStreamChunk> {
    const attempt = this.start('chat', request.model, request);
    attempt.span.setAttribute(GEN_AI.requestStream, true);
    const upstream = this.inner.generateStream!(request)[Symbol.asyncIterator]();
    const contexts = this.options.contexts;
    const capture = this.options.captureContent;
    let text = '';
    let first = true;
    const iterator: AsyncIterator<GenerateStreamChunk> = {
      next: async () => {
        let step: IteratorResult<GenerateStreamChunk>;
        try {
          // The adapter sends its request on the first read: in the attempt's context, so it carries its traceparent.
          step = await contexts.run(attempt.context, () => upstream.next());
        } catch (error) {
          attempt.failed(error);
          throw error;
        }
        if (step.done) {
          attempt.cut();
          return step;
        }
        const chunk = step.value;
        if (first) {
          first = false;
          attempt.firstChunk();
        }
        if (!chunk.done) {
          if (capture) text += chunk.text;
        } else {
          attempt.answered(chunk.model, chunk.usage, chunk.finishReason);
          if (capture) attempt.span.setAttribute(GEN_AI.outputMessages, outputMessages(text, chunk.finishReason));
          attempt.end();
        }
        return step;
      },
      return: async (value?: unknown) => {
        attempt.cut();
        return upstream.return ? upstream.return(value) : { done: true, value: undefined };
      },
    };
    return { [Symbol.asyncIterator]: () => iterator };
  }

  private start(operation: Operation, requestedModel: string | undefined, request?: GenerateRequest): Attempt {
    const model = requestedModel ?? this.configured[operation];
    const attributes: Attributes = {
      [GEN_AI.operationName]: operation,
      [GEN_AI.providerName]: this.providerName,
      [GEN_AI.requestModel]: model,
      [TOLLGATE.provider]: this.inner.name,
      ...this.server,
    };
    if (request?.maxTokens !== undefined) attributes[GEN_AI.requestMaxTokens] = request.maxTokens;
    if (request?.temperature !== undefined) attributes[GEN_AI.requestTemperature] = request.temperature;
    const caller = currentCallContext()?.identity;
    if (caller?.tenant) attributes[TOLLGATE.tenant] = caller.tenant;
    if (caller?.keyId) attributes[TOLLGATE.keyId] = caller.keyId;
    if (request && this.options.captureContent) attributes[GEN_AI.inputMessages] = inputMessages(request.messages);
    const parent = this.options.contexts.active();
    const span = this.options.tracer.startSpan(`${operation} ${model}`, { kind: SpanKind.CLIENT, attributes }, parent);
    const metrics = this.options.metrics;
    return new Attempt(span, trace.setSpan(parent, span), metrics && { metrics, attributes: this.metricAttributes[operation].of(model) });
  }
}

/** Where an attempt records its metrics, and the attribute objects of its requested model. */
interface AttemptMetrics {
  metrics: GenAiMetrics;
  attributes: ModelMetricAttributes;
}

/** One attempt's span and measurements; ended once, whichever way the attempt ends. */
class Attempt {
  private readonly started = performance.now();
  private ended = false;
  private answeredAttributes?: AnsweredMetricAttributes;

  constructor(
    readonly span: Span,
    readonly context: Context,
    private readonly metrics: AttemptMetrics | undefined,
  ) {}

  firstChunk(): void {
    const seconds = (performance.now() - this.started) / 1000;
    this.span.setAttribute(GEN_AI.responseTimeToFirstChunk, seconds);
    if (this.metrics) this.metrics.metrics.timeToFirstToken(seconds, this.metrics.attributes.requested);
  }

  answered(model: string, usage: TokenUsage | undefined, finishReason: string | undefined): void {
    const span = this.span;
    span.setAttribute(GEN_AI.responseModel, model);
    if (finishReason !== undefined) span.setAttribute(GEN_AI.responseFinishReasons, [finishReason]);
    if (usage?.inputTokens !== undefined) span.setAttribute(GEN_AI.usageInputTokens, usage.inputTokens);
    if (usage?.outputTokens !== undefined) span.setAttribute(GEN_AI.usageOutputTokens, usage.outputTokens);
    if (usage?.cachedInputTokens !== undefined) span.setAttribute(GEN_AI.usageCacheReadInputTokens, usage.cachedInputTokens);
    if (usage?.reasoningTokens !== undefined) span.setAttribute(GEN_AI.usageReasoningOutputTokens, usage.reasoningTokens);
    if (!this.metrics) return;
    this.answeredAttributes = this.metrics.attributes.answeredBy(model);
    if (usage) this.metrics.metrics.tokens(usage.inputTokens, usage.outputTokens, this.answeredAttributes);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.metrics) this.metrics.metrics.duration((performance.now() - this.started) / 1000, this.answeredAttributes?.duration ?? this.metrics.attributes.requested);
    this.span.end();
  }

  /** A stream its consumer stopped before the end, or that ended without its final chunk. */
  cut(): void {
    if (this.ended) return;
    this.span.setAttribute(TOLLGATE.streamCut, true);
    this.end();
  }

  failed(error: unknown): void {
    if (this.ended) return;
    const type = errorType(error);
    this.span.setAttribute('error.type', type);
    // Tollgate's own message only: an upstream body never reaches a TollgateError's message (docs/decisions.md B4).
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: type });
    this.ended = true;
    if (this.metrics) {
      const attributes = this.answeredAttributes?.duration ?? this.metrics.attributes.requested;
      this.metrics.metrics.duration((performance.now() - this.started) / 1000, { ...attributes, 'error.type': type });
    }
    this.span.end();
  }
}

export function errorType(error: unknown): string {
  const type = (error as { type?: unknown })?.type;
  if (typeof type === 'string') return type;
  return (error as { name?: unknown })?.name === 'AbortError' ? 'aborted' : 'internal_error';
}

/** server.address and server.port of the provider's URL (never its path, query or credentials). */
function serverAttributes(url: unknown): Attributes {
  if (typeof url !== 'string') return {};
  try {
    const parsed = new URL(url);
    const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
    return { 'server.address': parsed.hostname, 'server.port': port };
  } catch {
    return {};
  }
}

/** The conventions' message format; images are named, never their data. */
function inputMessages(messages: readonly ChatMessage[]): string {
  return JSON.stringify(
    messages.map((message) => {
      const parts: Array<Record<string, unknown>> = [];
      if (typeof message.content === 'string') parts.push({ type: 'text', content: message.content });
      else if (Array.isArray(message.content)) {
        for (const part of message.content) parts.push(part.type === 'text' ? { type: 'text', content: part.text } : { type: 'image' });
      }
      if (message.role === 'assistant') for (const call of message.toolCalls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });
      return message.role === 'tool' ? { role: 'tool', parts: [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }] } : { role: message.role, parts };
    }),
  );
}

function outputMessages(text: string, finishReason: string | undefined): string {
  return JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: text }], ...(finishReason !== undefined ? { finish_reason: finishReason } : {}) }]);
}
