import { type OutputAllowance, outputMicros } from './budget-engine';
import type { CounterPlan, ScopeLimit, Usage } from './budget-scope';

/** A move of one counter: usage, requests, and (for a lease's return) the number of leases it gives back. */
export interface CounterDelta extends Usage {
  requests: number;
  leases: number;
}

/** Calls of the size of the one that asked, taken ahead per counter (decision D10). */
export const LEASE_CALLS = 32;
/** Leases a counter must still have room for after granting one: budgets near their end get none. */
export const LEASE_HEADROOM = 4;
/** How long this process may spend a lease; Redis counts it outstanding at least this long. */
export const LEASE_TTL_MS = 250;

/** One counter's lease: charged in Redis in full when granted, spent here without a round trip. */
interface Lease {
  readonly size: CounterDelta;
  /** The limits its room was checked against: a plan on the same counter under other limits does not spend it. */
  readonly limit: ScopeLimit;
  /** What this process has charged to it, less the refunds settled into it. */
  readonly used: Usage & { requests: number };
  /** performance.now() after which this process no longer spends it. */
  readonly deadline: number;
  readonly timer: NodeJS.Timeout;
}

/** What one call charges every counter of its plan when it is granted all the output it wants. */
export interface CallCharge {
  micros: number;
  tokens: number;
}

export function callCharge(estimate: Usage, output: OutputAllowance): CallCharge {
  return { micros: estimate.micros + outputMicros(output.wanted, output), tokens: estimate.tokens + output.wanted };
}

/** The lease a call of this charge asks for: LEASE_CALLS such calls. */
export function leaseSize(charge: CallCharge): CounterDelta {
  return { micros: LEASE_CALLS * charge.micros, tokens: LEASE_CALLS * charge.tokens, requests: LEASE_CALLS, leases: 1 };
}

/**
 * The leases this process holds on Redis counters, one per counter key at most. A call is served from them
 * when every counter of its plan has one with room for all the output it wants, on the limited fields; its
 * refunds go back into the lease while it lasts. When a lease's time is up, or a new one replaces it, what it
 * did not spend goes back to Redis with the count of outstanding leases (`returned`).
 */
export class CounterLeases {
  private readonly leases = new Map<string, Lease>();

  constructor(private readonly returned: (key: string, delta: CounterDelta) => void) {}

  /** Charges a call to the leases of every counter of its plan and answers the output granted, or undefined. */
  charge(plans: readonly CounterPlan[], charge: CallCharge, wanted: number): number | undefined {
    const now = performance.now();
    for (const plan of plans) {
      const lease = this.leases.get(plan.key);
      if (!lease || now >= lease.deadline || !fits(lease, plan, charge)) return undefined;
    }
    for (const plan of plans) {
      const used = this.leases.get(plan.key)!.used;
      used.micros += charge.micros;
      used.tokens += charge.tokens;
      used.requests += 1;
    }
    return wanted;
  }

  /** Whether the counter has a lease in time with room for the call (so it needs no new one). */
  covers(plan: CounterPlan, charge: CallCharge): boolean {
    const lease = this.leases.get(plan.key);
    return lease !== undefined && performance.now() < lease.deadline && fits(lease, plan, charge);
  }

  /** Takes a refund (no field positive) into the counter's lease in time; false when there is none. */
  refund(key: string, delta: Usage & { requests: number }): boolean {
    const lease = this.leases.get(key);
    if (!lease || performance.now() >= lease.deadline) return false;
    lease.used.micros += delta.micros;
    lease.used.tokens += delta.tokens;
    lease.used.requests += delta.requests;
    return true;
  }

  /**
   * Holds a lease Redis granted on a call sent at `sentAt` (performance.now()): Redis counts it from its own
   * later clock, so this process stops spending it no later than Redis stops counting it. A lease it replaces
   * is returned.
   */
  hold(key: string, size: CounterDelta, limit: ScopeLimit, sentAt: number): void {
    this.giveBack(key);
    const timer = setTimeout(() => this.giveBack(key), Math.max(0, sentAt + LEASE_TTL_MS - performance.now()));
    timer.unref();
    this.leases.set(key, { size, limit, used: { micros: 0, tokens: 0, requests: 0 }, deadline: sentAt + LEASE_TTL_MS, timer });
  }

  /** Returns every lease (at close). */
  giveBackAll(): void {
    for (const key of [...this.leases.keys()]) this.giveBack(key);
  }

  /** Returns the counter's lease, if this process holds one. */
  giveBack(key: string): void {
    const lease = this.leases.get(key);
    if (!lease) return;
    this.leases.delete(key);
    clearTimeout(lease.timer);
    const { size, used } = lease;
    this.returned(key, { micros: used.micros - size.micros, tokens: used.tokens - size.tokens, requests: used.requests - size.requests, leases: -1 });
  }
}

/**
 * Room for the call on every field the counter limits (the others only count), under the limits the lease was
 * granted for: a run-time rule or a token's claims may hold the same counter to another limit.
 */
function fits(lease: Lease, plan: CounterPlan, charge: CallCharge): boolean {
  const { limit } = plan.scope;
  const { size, used } = lease;
  return (
    limit.micros === lease.limit.micros &&
    limit.tokens === lease.limit.tokens &&
    limit.requests === lease.limit.requests &&
    (limit.micros === undefined || used.micros + charge.micros <= size.micros) &&
    (limit.tokens === undefined || used.tokens + charge.tokens <= size.tokens) &&
    (limit.requests === undefined || used.requests + 1 <= size.requests)
  );
}
