import { Inject, Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import diagnosticsChannel from 'node:diagnostics_channel';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DeploymentStatus } from '../ai/client/ai-client';

interface LabelledSeries {
  requests: { inc(): void };
  duration: { observe(value: number): void };
}

/** One tenant/provider/model/status combination's ledger figures, copied into the ledger counters when scraped. */
interface LedgerTally {
  labels: { tenant: string; provider: string; model: string };
  status: string;
  input: number;
  output: number;
  cached: number;
  /** Integer micro-dollars of the priced calls: exact, converted to USD only when scraped. */
  costMicros: number;
  priced: number;
  unpriced: number;
  calls: number;
}
import { AGENT_EVENT_CHANNEL, type AgentTelemetryEvent } from '../ai/agent/agent-telemetry';
import {
  PROVIDER_FALLBACK_CHANNEL,
  SERVICE_REQUEST_CHANNEL,
  type ProviderFallbackEvent,
  type ServiceRequestEvent,
} from '../ai/client/service-request.events';
import {
  AUTH_DECISION_CHANNEL,
  PERMISSION_CACHE_CHANNEL,
  type AuthDecisionEvent,
  type PermissionCacheEvent,
} from '../auth/auth-events';
import { LEDGER_ENTRY_CHANNEL, type LedgerEntryEvent } from '../governance/ledger/ledger-events';
import { ALL_TENANTS_LABEL, DEFAULT_METRICS_SETTINGS, METRICS_SETTINGS, type MetricsSettings } from './metrics-settings';

/** Seconds; from a fast cached route (~1 ms) to a slow model answer (a minute). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The agent events that end a run, and the outcome label each one counts as. */
const AGENT_RUN_OUTCOMES: Readonly<Record<string, string>> = {
  'agent.completed': 'completed',
  'agent.max_loops_exceeded': 'max_loops_exceeded',
  'agent.failed': 'failed',
  'agent.init_failed': 'init_failed',
};

/** Route label of requests no route matched, so unknown URLs cannot grow the label set. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The Prometheus registry of one application (not prom-client's global one, so two apps in a process,
 * or a host's own metrics, never collide) and the subscriptions that feed it. Auth decisions,
 * permission-cache outcomes and ledger entries are tallied in plain numbers on the request path and copied
 * into their counters only when /metrics is scraped.
 */
@Injectable()
export class MetricsService implements OnModuleDestroy {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly providerRequests: Counter<'provider' | 'operation' | 'status' | 'error_type'>;
  private readonly providerDuration: Histogram<'provider' | 'operation' | 'status'>;
  private readonly providerRetries: Counter<'provider' | 'operation'>;
  private readonly providerFallbacks: Counter<'from' | 'to' | 'operation'>;
  private readonly agentRuns: Counter<'outcome'>;
  private readonly agentRunDuration: Histogram<'outcome'>;
  /** guard -> code -> count, and the status each code answered with. */
  private readonly authTally: Record<string, Record<string, number>> = { jwt: {}, rbac: {} };
  private readonly authStatus: Record<string, number> = {};
  private readonly cacheTally = { hit: 0, miss: 0 };
  private readonly subscriptions: Array<[string, (message: unknown) => void]> = [];
  /**
   * Labelled children by label values: prom-client hashes a label object on every call, the hot part of a
   * request's metrics. Bounded: routes are patterns, providers and operations are configured names.
   */
  private readonly httpSeries = new Map<string, LabelledSeries>();
  private readonly providerSeries = new Map<string, LabelledSeries>();
  /** Bounded by the ledger's label rules (docs/governance.md#metrics): tenants past the cap and unnamed models are `other`. */
  private readonly ledgerTallies = new Map<string, LedgerTally>();
  /** Only a /metrics behind `metrics.token` shows the ledger per tenant; an open one sums every tenant as `all`. */
  private readonly ledgerPerTenant: boolean;

  constructor(@Optional() @Inject(METRICS_SETTINGS) settings: MetricsSettings = DEFAULT_METRICS_SETTINGS) {
    this.ledgerPerTenant = settings.token !== undefined;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'tollgate_' });
    this.httpRequests = new Counter({
      name: 'tollgate_http_requests_total',
      help: 'HTTP requests by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'tollgate_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.providerRequests = new Counter({
      name: 'tollgate_provider_requests_total',
      help: 'Upstream provider calls (each attempt) by provider, operation, status and error type.',
      labelNames: ['provider', 'operation', 'status', 'error_type'],
      registers,
    });
    this.providerDuration = new Histogram({
      name: 'tollgate_provider_request_duration_seconds',
      help: 'Upstream provider call latency by provider, operation and status.',
      labelNames: ['provider', 'operation', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.providerRetries = new Counter({
      name: 'tollgate_provider_retries_total',
      help: 'Provider calls that were retries (attempt 2 and later).',
      labelNames: ['provider', 'operation'],
      registers,
    });
    this.providerFallbacks = new Counter({
      name: 'tollgate_provider_fallbacks_total',
      help: 'Moves to a fallback provider after the requested one failed.',
      labelNames: ['from', 'to', 'operation'],
      registers,
    });
    this.agentRuns = new Counter({
      name: 'tollgate_agent_runs_total',
      help: 'Agent runs by outcome: completed, max_loops_exceeded, failed, init_failed.',
      labelNames: ['outcome'],
      registers,
    });
    this.agentRunDuration = new Histogram({
      name: 'tollgate_agent_run_duration_seconds',
      help: 'Agent run duration by outcome.',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const ledgerTallies = this.ledgerTallies;
    new Counter({
      name: 'tollgate_ledger_tokens_total',
      help: 'Tokens of model calls recorded in the ledger, by tenant, provider, model and type (input, output, cached; cached is part of input).',
      labelNames: ['tenant', 'provider', 'model', 'type'],
      registers,
      collect() {
        this.reset();
        for (const tally of ledgerTallies.values()) {
          this.inc({ ...tally.labels, type: 'input' }, tally.input);
          this.inc({ ...tally.labels, type: 'output' }, tally.output);
          this.inc({ ...tally.labels, type: 'cached' }, tally.cached);
        }
      },
    });
    new Counter({
      name: 'tollgate_ledger_cost_usd_total',
      help: 'Cost in USD of the priced model calls recorded in the ledger, by tenant, provider and model.',
      labelNames: ['tenant', 'provider', 'model'],
      registers,
      collect() {
        this.reset();
        for (const tally of ledgerTallies.values()) if (tally.priced > 0) this.inc(tally.labels, tally.costMicros / 1_000_000);
      },
    });
    new Counter({
      name: 'tollgate_ledger_unpriced_calls_total',
      help: 'Model calls recorded without a cost because the model has no price.',
      labelNames: ['tenant', 'provider', 'model'],
      registers,
      collect() {
        this.reset();
        for (const tally of ledgerTallies.values()) if (tally.unpriced > 0) this.inc(tally.labels, tally.unpriced);
      },
    });
    new Counter({
      name: 'tollgate_ledger_calls_total',
      help: 'Model calls recorded in the ledger, by tenant, provider, model and status (ok, error, aborted).',
      labelNames: ['tenant', 'provider', 'model', 'status'],
      registers,
      collect() {
        this.reset();
        for (const tally of ledgerTallies.values()) this.inc({ ...tally.labels, status: tally.status }, tally.calls);
      },
    });
    const authTally = this.authTally;
    const authStatus = this.authStatus;
    new Counter({
      name: 'tollgate_auth_decisions_total',
      help: 'Decisions of the JWT and RBAC guards: allowed, or denied with the 401/403 code.',
      labelNames: ['guard', 'outcome', 'status', 'code'],
      registers,
      collect() {
        this.reset();
        for (const [guard, codes] of Object.entries(authTally)) {
          for (const [code, count] of Object.entries(codes)) {
            const outcome = code === 'allowed' ? 'allowed' : 'denied';
            this.inc({ guard, outcome, status: String(authStatus[code] ?? 200), code }, count);
          }
        }
      },
    });
    const cacheTally = this.cacheTally;
    new Counter({
      name: 'tollgate_rbac_permission_cache_total',
      help: 'RBAC permission cache lookups: hit (a cached grant answered) or miss (the record was evaluated).',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset();
        this.inc({ result: 'hit' }, cacheTally.hit);
        this.inc({ result: 'miss' }, cacheTally.miss);
      },
    });

    this.subscribe(SERVICE_REQUEST_CHANNEL, (event: ServiceRequestEvent) => this.recordProviderCall(event));
    this.subscribe(PROVIDER_FALLBACK_CHANNEL, (event: ProviderFallbackEvent) =>
      this.providerFallbacks.inc({ from: event.from, to: event.to, operation: event.operation }),
    );
    this.subscribe(AUTH_DECISION_CHANNEL, (event: AuthDecisionEvent) => this.recordAuthDecision(event));
    this.subscribe(PERMISSION_CACHE_CHANNEL, (event: PermissionCacheEvent) => {
      if (event.hit) this.cacheTally.hit++;
      else this.cacheTally.miss++;
    });
    this.subscribe(AGENT_EVENT_CHANNEL, (event: AgentTelemetryEvent) => this.recordAgentEvent(event));
    this.subscribe(LEDGER_ENTRY_CHANNEL, (event: LedgerEntryEvent) => this.recordLedgerEntry(event));
  }

  /** Called once per response by the HTTP hook; `route` is the route pattern, never the raw URL. */
  observeHttpRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.httpSeries.get(key);
    if (series === undefined) {
      const labels = { method, route, status: String(status) };
      series = { requests: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      this.httpSeries.set(key, series);
    }
    series.requests.inc();
    series.duration.observe(seconds);
  }

  /** The Prometheus text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * Gauges per deployment of the aliases that have them (docs/operations.md#metrics), read from `source` when
   * scraped: calls in flight, whether it cools down, and its moving average of time to first token.
   */
  observeDeployments(source: () => DeploymentStatus[]): void {
    const labelNames = ['alias', 'deployment'] as const;
    const gauge = (name: string, help: string, value: (status: DeploymentStatus) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect() {
          this.reset();
          for (const status of source()) {
            const measured = value(status);
            if (measured !== undefined) this.set({ alias: status.alias, deployment: status.deployment }, measured);
          }
        },
      });
    gauge('tollgate_deployment_in_flight', 'Calls in flight on a deployment of an alias with deployments (this process).', (status) => status.inFlight);
    gauge('tollgate_deployment_cooling_down', '1 while a deployment is skipped after failures (cooling down, or its probe out), else 0.', (status) =>
      status.state === 'healthy' ? 0 : 1,
    );
    gauge('tollgate_deployment_latency_seconds', "Moving average of a deployment's time to first token (a whole answer when not streamed), this process.", (status) =>
      status.latencyMs === undefined ? undefined : status.latencyMs / 1000,
    );
  }

  onModuleDestroy(): void {
    for (const [name, listener] of this.subscriptions) diagnosticsChannel.unsubscribe(name, listener);
    this.subscriptions.length = 0;
    this.registry.clear();
  }

  private subscribe<T>(name: string, handler: (message: T) => void): void {
    const listener = (message: unknown) => handler(message as T);
    diagnosticsChannel.subscribe(name, listener);
    this.subscriptions.push([name, listener]);
  }

  private recordProviderCall({ duration, payload }: ServiceRequestEvent): void {
    const { provider, operation, status } = payload;
    const errorType = payload.errorType ?? '';
    const key = `${provider} ${operation} ${status} ${errorType}`;
    let series = this.providerSeries.get(key);
    if (series === undefined) {
      series = {
        requests: this.providerRequests.labels({ provider, operation, status, error_type: errorType }),
        duration: this.providerDuration.labels({ provider, operation, status }),
      };
      this.providerSeries.set(key, series);
    }
    series.requests.inc();
    series.duration.observe(duration / 1000);
    if (payload.attempt > 1) this.providerRetries.inc({ provider, operation });
  }

  private recordLedgerEntry(event: LedgerEntryEvent): void {
    const { provider, model, status } = event;
    const tenant = this.ledgerPerTenant ? event.tenant : ALL_TENANTS_LABEL;
    const key = `${tenant}\u0000${provider}\u0000${model}\u0000${status}`;
    let tally = this.ledgerTallies.get(key);
    if (tally === undefined) {
      tally = { labels: { tenant, provider, model }, status, input: 0, output: 0, cached: 0, costMicros: 0, priced: 0, unpriced: 0, calls: 0 };
      this.ledgerTallies.set(key, tally);
    }
    tally.input += event.inputTokens;
    tally.output += event.outputTokens;
    tally.cached += event.cachedTokens;
    if (event.costMicros === null) tally.unpriced += 1;
    else {
      tally.costMicros += event.costMicros;
      tally.priced += 1;
    }
    tally.calls += 1;
  }

  private recordAuthDecision(event: AuthDecisionEvent): void {
    const codes = this.authTally[event.guard];
    codes[event.code] = (codes[event.code] ?? 0) + 1;
    if (event.outcome === 'denied') this.authStatus[event.code] = event.status;
  }

  private recordAgentEvent(event: AgentTelemetryEvent): void {
    const outcome = AGENT_RUN_OUTCOMES[event.event];
    if (outcome === undefined) return;
    this.agentRuns.inc({ outcome });
    if (event.durationMs !== undefined) this.agentRunDuration.observe({ outcome }, event.durationMs / 1000);
  }
}
