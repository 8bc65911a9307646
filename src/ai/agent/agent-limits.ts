import { TollgateError } from '../errors';

/** Bounds of one agent run (docs/decisions.md B3); sizes are UTF-8 bytes. */
export interface AgentLimits {
  /** Model turns per run (default 5); a request may ask for fewer, never more. */
  maxLoops: number;
  /** The task text (default 16 KiB). */
  maxTaskBytes: number;
  /** One model turn (default 64 KiB). */
  maxResponseBytes: number;
  /** The transcript sent to the model; older turns are compacted beyond it (default 64,000). */
  maxContextBytes: number;
  /** The JSON action block of one turn (default 8 KiB). */
  maxActionBytes: number;
  /** One serialized tool observation (default 16 KiB). */
  maxObservationBytes: number;
}

export const DEFAULT_AGENT_LIMITS: Readonly<AgentLimits> = Object.freeze({
  maxLoops: 5,
  maxTaskBytes: 16 * 1024,
  maxResponseBytes: 64 * 1024,
  maxContextBytes: 64_000,
  maxActionBytes: 8 * 1024,
  maxObservationBytes: 16 * 1024,
});

/** Smallest useful values: an observation must fit its own JSON envelope, a context must fit the task. */
const MINIMUMS: Readonly<AgentLimits> = Object.freeze({
  maxLoops: 1,
  maxTaskBytes: 1,
  maxResponseBytes: 64,
  maxContextBytes: 1024,
  maxActionBytes: 32,
  maxObservationBytes: 128,
});

/** Defaults for unset values; a value that is not an integer at or above its minimum is refused by name. */
export function resolveAgentLimits(partial: Partial<AgentLimits> = {}): AgentLimits {
  const limits = { ...DEFAULT_AGENT_LIMITS, ...stripUndefined(partial) };
  for (const key of Object.keys(DEFAULT_AGENT_LIMITS) as Array<keyof AgentLimits>) {
    const value = limits[key];
    if (!Number.isSafeInteger(value) || value < MINIMUMS[key]) {
      throw new TollgateError(`agent limit ${key} must be an integer of at least ${MINIMUMS[key]} (got ${String(value)})`);
    }
  }
  // Compaction drops old turns, never the task: the task must leave room for at least one observation.
  if (limits.maxContextBytes < limits.maxTaskBytes + limits.maxObservationBytes) {
    throw new TollgateError(`agent limit maxContextBytes (${limits.maxContextBytes}) must be at least maxTaskBytes + maxObservationBytes (${limits.maxTaskBytes + limits.maxObservationBytes})`);
  }
  return limits;
}

function stripUndefined(partial: Partial<AgentLimits>): Partial<AgentLimits> {
  return Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined));
}
