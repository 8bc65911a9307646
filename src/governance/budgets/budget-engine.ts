import { InvalidBudgetError, limitExceeded } from './budget-errors';
import { type CounterPlan, type LimitField, type MeteredScope, type Usage, WindowCache, planCounters, scopeProblems, usageProblems } from './budget-scope';

/** Counters charged by one reserve call; settle or release it exactly once (later calls do nothing). */
export interface Reservation {
  readonly counters: readonly { key: string; expireAt: number }[];
  readonly estimate: Usage;
  done: boolean;
}

/** A counter over its limit, as a store reports it: which plan and which field. */
export interface Refusal {
  index: number;
  field: LimitField;
}

/**
 * Reserve before a model call, settle after it: every scope is checked and charged in one atomic step
 * (all or none), so concurrent callers in any number of processes cannot overspend together.
 */
export interface BudgetEngine {
  /** Charges `estimate` and one request to every scope, or throws BudgetExceededError / RateLimitExceededError. */
  reserve(scopes: readonly MeteredScope[], estimate: Usage): Promise<Reservation>;
  /** Corrects the reservation to what the call really cost (the request stays counted). */
  settle(reservation: Reservation, actual: Usage): Promise<void>;
  /** The call was not made: gives back the estimate and the request. */
  release(reservation: Reservation): Promise<void>;
  close(): Promise<void>;
}

/** The store part of an engine: where counters live. The checks and errors are the same for every store. */
export interface CounterStore {
  /** Atomically: refuse with the first counter that would pass its limit, else charge every counter. */
  tryCharge(plans: readonly CounterPlan[], estimate: Usage, now: number): Promise<Refusal | undefined>;
  /** Moves existing counters by the deltas; counters whose window expired are left alone. */
  adjust(keys: readonly string[], delta: Usage & { requests: number }): Promise<void>;
  close(): Promise<void>;
}

export class CountingBudgetEngine implements BudgetEngine {
  private readonly windows = new WindowCache();

  constructor(
    private readonly store: CounterStore,
    private readonly keyPrefix: string,
    private readonly clock: () => number = Date.now,
  ) {}

  async reserve(scopes: readonly MeteredScope[], estimate: Usage): Promise<Reservation> {
    const problems = [...scopeProblems(scopes), ...usageProblems(estimate, 'estimate')];
    if (problems.length) throw new InvalidBudgetError(problems);
    const now = this.clock();
    const plans = planCounters(scopes, now, this.keyPrefix, this.windows);
    const refusal = plans.length ? await this.store.tryCharge(plans, estimate, now) : undefined;
    if (refusal) {
      const plan = plans[refusal.index];
      throw limitExceeded(plan.scope, refusal.field, new Date(plan.window.end));
    }
    return { counters: plans.map((plan) => ({ key: plan.key, expireAt: plan.window.end })), estimate: { ...estimate }, done: false };
  }

  async settle(reservation: Reservation, actual: Usage): Promise<void> {
    const problems = usageProblems(actual, 'actual');
    if (problems.length) throw new InvalidBudgetError(problems);
    await this.finish(reservation, { micros: actual.micros - reservation.estimate.micros, tokens: actual.tokens - reservation.estimate.tokens, requests: 0 });
  }

  async release(reservation: Reservation): Promise<void> {
    await this.finish(reservation, { micros: -reservation.estimate.micros, tokens: -reservation.estimate.tokens, requests: -1 });
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private async finish(reservation: Reservation, delta: Usage & { requests: number }): Promise<void> {
    if (reservation.done) return;
    reservation.done = true;
    if (reservation.counters.length === 0 || (delta.micros === 0 && delta.tokens === 0 && delta.requests === 0)) return;
    await this.store.adjust(reservation.counters.map((counter) => counter.key), delta);
  }
}
