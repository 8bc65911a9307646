/**
 * OpenTelemetry for the served application, loaded only when `observability.otel` (or OTEL_*) turns it on
 * (install-otel.ts requires this file then): the SDK's tracer and meter providers with OTLP/HTTP exporters, a
 * SERVER span per request (the caller's traceparent is its parent), a CLIENT span per upstream attempt
 * (traced-provider.ts), spans of agent runs and tool calls, the budget's decision and the call's cost on the
 * span that made the call, and the trace context sent upstream. docs/operations.md#traces.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  type Attributes,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  DiagLogLevel,
  diag,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-node';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions';
import { AiClient } from '../../ai/client/ai-client';
import type { GateTicket, ModelCallGate } from '../../ai/client/model-call-gate';
import { displayUrl } from '../../common/display-url';
import { packageVersion } from '../../common/packaged-files';
import { type OperationTracer, setOperationTracer } from '../../common/traced-operation';
import { governanceOf } from '../../governance/governance-identity';
import { LEDGER_ENTRY_CHANNEL, type LedgerEntryEvent } from '../../governance/ledger/ledger-events';
import { setTraceContextInjector } from '../../upstream/trace-context-headers';
import { CallScopeContextManager, ROOT_TRACE_CONTEXT } from './call-scope-context-manager';
import { GEN_AI, TOLLGATE } from './gen-ai-conventions';
import { GenAiMetrics } from './gen-ai-metrics';
import { PooledIdGenerator } from './pooled-id-generator';
import type { OtelSettings } from './otel-settings';
import { errorType, tracedProvider } from './traced-provider';

const INSTRUMENTATION_SCOPE = 'tollgate';

interface RequestLike {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  routeOptions?: { url?: string };
}

interface ReplyLike {
  statusCode: number;
}

type HookDone = () => void;

interface TracingHookHost {
  addHook(name: 'onRequest', hook: (request: RequestLike, reply: ReplyLike, done: HookDone) => void): unknown;
  addHook(name: 'onResponse', hook: (request: RequestLike, reply: ReplyLike, done: HookDone) => void): unknown;
  addHook(name: 'onRequestAbort', hook: (request: RequestLike, done: HookDone) => void): unknown;
  addHook(name: 'onClose', hook: (instance: unknown, done: HookDone) => void): unknown;
}

/** The request's server span, under a symbol no caller can set. */
const SERVER_SPAN = Symbol('tollgate:otel-server-span');
type TracedRequest = RequestLike & { [SERVER_SPAN]?: Span };

export function startOpenTelemetry(app: NestFastifyApplication, settings: OtelSettings): void {
  const logger = new Logger('OpenTelemetry');
  const version = packageVersion();
  // The SDK's own problems (an unreachable collector, a refused export) at warn level, never its debug detail.
  diag.setLogger(
    {
      error: (message) => logger.warn(message),
      warn: (message) => logger.warn(message),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: version }));
  const exporterOptions = (signal: string) => ({
    ...(settings.endpoint !== undefined ? { url: `${settings.endpoint}/v1/${signal}` } : {}),
    ...(settings.headers !== undefined ? { headers: settings.headers } : {}),
  });
  const tracerProvider = new NodeTracerProvider({
    resource,
    idGenerator: new PooledIdGenerator(),
    ...(settings.samplingRatio !== undefined ? { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRatio) }) } : {}),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter(exporterOptions('traces')))],
  });
  // The context manager and the propagator, process-wide as the API expects. The context lives in the call
  // context's AsyncLocalStorage, not a third one (call-scope-context-manager.ts); W3C trace context alone, since
  // nothing here reads baggage (the default adds a baggage propagator to every request).
  const propagator = new W3CTraceContextPropagator();
  const contexts = new CallScopeContextManager();
  tracerProvider.register({ propagator, contextManager: contexts });
  const tracer = tracerProvider.getTracer(INSTRUMENTATION_SCOPE, version);
  const meterProvider = settings.metrics
    ? new MeterProvider({
        resource,
        readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(exporterOptions('metrics')), exportIntervalMillis: settings.metricsIntervalMs })],
      })
    : undefined;
  const metrics = meterProvider ? new GenAiMetrics(meterProvider.getMeter(INSTRUMENTATION_SCOPE, version)) : undefined;

  const fastify = app.getHttpAdapter().getInstance() as unknown as TracingHookHost;
  // Tollgate's hooks call the context manager and the propagator they installed, not the API's global
  // registry: one lookup and one rest-argument copy less per call (docs/decisions.md C14).
  installServerSpans(fastify, tracer, contexts, propagator);
  app.get(AiClient).instrument({
    provider: (provider) => tracedProvider(provider, { tracer, contexts, metrics, captureContent: settings.captureContent }),
    gate: tracedGate,
  });
  setOperationTracer(operationTracer(tracer, contexts));
  setTraceContextInjector((headers) => propagator.inject(contexts.active(), headers, defaultTextMapSetter));
  subscribe(LEDGER_ENTRY_CHANNEL, addCost);

  fastify.addHook('onClose', (_instance, done) => {
    setTraceContextInjector(undefined);
    setOperationTracer(undefined);
    unsubscribe(LEDGER_ENTRY_CHANNEL, addCost);
    // Exports what is still buffered; a collector that does not answer cannot hold the shutdown past the exporters' timeout.
    Promise.allSettled([tracerProvider.shutdown(), meterProvider?.shutdown()])
      .then(() => {
        trace.disable();
        context.disable();
        propagation.disable();
      })
      .finally(done);
  });
  logger.log(
    `exporting traces${metrics ? ' and GenAI metrics' : ''} over OTLP/HTTP to ${settings.endpoint !== undefined ? endpointForLog(settings.endpoint) : 'the OTEL_EXPORTER_OTLP_* endpoint'}` +
      `${settings.captureContent ? ', with prompts and answers' : ''}`,
  );
}

/** A SERVER span from the first hook to the response: the rest of the request runs in its context. */
function installServerSpans(fastify: TracingHookHost, tracer: Tracer, contexts: CallScopeContextManager, propagator: W3CTraceContextPropagator): void {
  fastify.addHook('onRequest', (request: TracedRequest, _reply, done) => {
    const parent = propagator.extract(ROOT_TRACE_CONTEXT, request.headers, defaultTextMapGetter);
    const route = request.routeOptions?.url;
    const query = request.url.indexOf('?');
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: request.method,
      // The path only: a query string can carry a key.
      [ATTR_URL_PATH]: query === -1 ? request.url : request.url.slice(0, query),
    };
    if (route !== undefined) attributes[ATTR_HTTP_ROUTE] = route;
    const span = tracer.startSpan(route === undefined ? request.method : `${request.method} ${route}`, { kind: SpanKind.SERVER, attributes }, parent);
    request[SERVER_SPAN] = span;
    contexts.run(trace.setSpan(parent, span), done);
  });
  fastify.addHook('onResponse', (request: TracedRequest, reply, done) => {
    endServerSpan(request, reply.statusCode);
    done();
  });
  fastify.addHook('onRequestAbort', (request: TracedRequest, done) => {
    endServerSpan(request, undefined);
    done();
  });
}

function endServerSpan(request: TracedRequest, status: number | undefined): void {
  const span = request[SERVER_SPAN];
  if (!span) return;
  request[SERVER_SPAN] = undefined;
  const caller = governanceOf(request)?.identity;
  if (caller?.tenant) span.setAttribute(TOLLGATE.tenant, caller.tenant);
  if (caller?.keyId) span.setAttribute(TOLLGATE.keyId, caller.keyId);
  if (status === undefined) {
    span.setAttribute('error.type', 'aborted');
  } else {
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    // The conventions mark a server span failed on 5xx only: a 4xx is the caller's mistake.
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}

/** What the budget decided for a call, on the span that made it (the request's, an agent run's or a tool call's). */
function tracedGate(gate: ModelCallGate): ModelCallGate {
  const decided = (ticket: GateTicket | undefined): GateTicket | undefined => {
    if (ticket) trace.getActiveSpan()?.setAttribute(TOLLGATE.budgetDecision, ticket.maxOutputTokens === undefined ? 'reserved' : 'bounded');
    return ticket;
  };
  const refused = (error: unknown): never => {
    const type = errorType(error);
    if (type === 'budget_exceeded' || type === 'rate_limited') trace.getActiveSpan()?.setAttribute(TOLLGATE.budgetDecision, 'refused');
    throw error;
  };
  const traced: ModelCallGate = {
    open: (call) => {
      let opened: ReturnType<ModelCallGate['open']>;
      try {
        opened = gate.open(call);
      } catch (error) {
        return refused(error);
      }
      return opened instanceof Promise ? opened.then(decided, refused) : decided(opened);
    },
    admits: (provider, model, kind) => gate.admits(provider, model, kind),
  };
  if (gate.countRequest) traced.countRequest = () => gate.countRequest!();
  return traced;
}

/** Sums each ledger entry's cost on the span current where the call was recorded. */
const costs = new WeakMap<Span, number>();
function addCost(message: unknown): void {
  const { costMicros } = message as LedgerEntryEvent;
  if (costMicros === null) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  const total = (costs.get(span) ?? 0) + costMicros;
  costs.set(span, total);
  span.setAttribute(TOLLGATE.costUsd, total / 1_000_000);
}

/** invoke_agent and execute_tool spans (INTERNAL: they run in this process), current while the operation runs. */
function operationTracer(tracer: Tracer, contexts: CallScopeContextManager): OperationTracer {
  return async (operation, run, describe) => {
    const attributes: Attributes = { [GEN_AI.operationName]: operation.name, ...operation.attributes };
    attributes[operation.name === 'invoke_agent' ? GEN_AI.agentName : GEN_AI.toolName] = operation.target;
    const parent = contexts.active();
    const span = tracer.startSpan(`${operation.name} ${operation.target}`, { kind: SpanKind.INTERNAL, attributes }, parent);
    try {
      const result = await contexts.run(trace.setSpan(parent, span), run);
      if (describe) span.setAttributes(describe(result));
      return result;
    } catch (error) {
      const type = errorType(error);
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: type });
      throw error;
    } finally {
      span.end();
    }
  };
}

/** The endpoint as the start-up line names it: never credentials in its user part or query. */
export function endpointForLog(endpoint: string): string {
  try {
    return displayUrl(endpoint);
  } catch {
    return 'the configured endpoint';
  }
}
