/**
 * Agent telemetry (docs/decisions.md B6): events carry counts, names, durations and categories, never prompts,
 * answers or tool arguments. Hooks are called synchronously in order; a hook that throws or rejects is
 * ignored, so telemetry can never break a run.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { ToolFailureCategory } from './tool-failure-category';

/** Every agent event is also published here, so observers outside the module (metrics) need no hook slot. */
export const AGENT_EVENT_CHANNEL = 'tollgate:agent.event';
const agentEvents = diagnosticsChannel.channel(AGENT_EVENT_CHANNEL);

export type AgentEventName =
  | 'agent.iteration'
  | 'agent.tool_call'
  | 'agent.completed'
  | 'agent.max_loops_exceeded'
  | 'agent.failed'
  | 'agent.init_failed';

export interface AgentTelemetryEvent {
  event: AgentEventName;
  /** ISO time the event was emitted. */
  time: string;
  runId: string;
  requestId: string;
  tenantId?: string;
  principal?: string;
  provider?: string;
  /** 1-based loop the event belongs to. */
  loop?: number;
  maxLoops: number;
  /** agent.tool_call only. */
  tool?: string;
  outcome?: 'ok' | 'failed' | 'vetoed';
  /** Tool failures: the category the model saw. agent.failed / init_failed: the error type. */
  category?: ToolFailureCategory | string;
  /** Protocol violations (agent.failed with category agent_protocol_error). */
  violation?: string;
  /** Tool call, model turn (iteration) or the whole run (completed, failed, max_loops_exceeded). */
  durationMs?: number;
  loopsRun?: number;
  observationTruncated?: boolean;
}

export type AgentTelemetryHook = (event: Readonly<AgentTelemetryEvent>) => void | Promise<void>;

/** Hooks beyond this many are refused at start: each one runs on every event of every run. */
export const MAX_TELEMETRY_HOOKS = 16;

export function emitAgentEvent(hooks: readonly AgentTelemetryHook[], event: AgentTelemetryEvent): void {
  const frozen = Object.freeze(event);
  if (agentEvents.hasSubscribers) agentEvents.publish(frozen);
  for (const hook of hooks) {
    try {
      const pending = hook(frozen);
      if (pending && typeof pending.catch === 'function') pending.catch(() => undefined);
    } catch {
      // A failing hook never breaks a run.
    }
  }
}
