import { InvalidBudgetError, limitExceeded } from './budget-errors';
import { type CounterPlan, type LimitField, type MeteredScope, type Usage, WindowCache, isCount, planCounters, scopeProblems, usageProblems } from './budget-scope';

/** Counters charged by one reserve call; settle or release it exactly once (later calls do nothing). */
export interface Reservation {
  /** The store keys of the counters charged. */
  readonly keys: readonly string[];
  readonly estimate: Usage;
  done: boolean;
}

/** The counter plans of one scopes array, valid while every one of their windows is. */
interface Planned {
  plans: CounterPlan[];
  keys: string[];
  from: number;
  until: number;
}

/** A counter over its limit, as a store reports it: which plan and which field. */
export interface Refusal {
  index: number;
  field: LimitField;
}

/**
 * A store's answer: synchronous from counters in this process, a promise from a shared store. Every call of a
 * budgeted caller goes through reserve and settle, and with AsyncLocalStorage in use each promise costs hooks.
 */
export type StoreAnswer<T> = T | Promise<T>;

/**
 * Reserve before a model call, settle after it: every scope is checked and charged in one atomic step
 * (all or none), so concurrent callers in any number of processes cannot overspend together. Each method
 * throws, or rejects, with the errors named.
 */
export interface BudgetEngine {
  /**
   * Charges `estimate` and one request to every scope, or throws BudgetExceededError / RateLimitExceededError.
   * A scopes array is read as it is when first handed over (BudgetsService hands each caller's the same one).
   */
  reserve(scopes: readonly MeteredScope[], estimate: Usage): StoreAnswer<Reservation>;
  /** Corrects the reservation to what the call really cost (the request stays counted). */
  settle(reservation: Reservation, actual: Usage): StoreAnswer<void>;
  /** The call was not made: gives back the estimate and the request. */
  release(reservation: Reservation): StoreAnswer<void>;
  close(): Promise<void>;
}

/** The store part of an engine: where counters live. The checks and errors are the same for every store. */
export interface CounterStore {
  /** Atomically: refuse with the first counter that would pass its limit, else charge every counter. */
  tryCharge(plans: readonly CounterPlan[], estimate: Usage, now: number): StoreAnswer<Refusal | undefined>;
  /** Moves existing counters by the deltas; counters whose window expired are left alone. */
  adjust(keys: readonly string[], delta: Usage & { requests: number }): StoreAnswer<void>;
  close(): Promise<void>;
}

export class CountingBudgetEngine implements BudgetEngine {
  private readonly windows = new WindowCache();
  /** Checked and planned once per scopes array and window, not on every call. */
  private readonly planned = new WeakMap<readonly MeteredScope[], Planned>();

  constructor(
    private readonly store: CounterStore,
    private readonly keyPrefix: string,
    private readonly clock: () => number = Date.now,
  ) {}

  reserve(scopes: readonly MeteredScope[], estimate: Usage): StoreAnswer<Reservation> {
    // A scopes array planned before was checked then.
    if (!isUsage(estimate) || !this.planned.has(scopes)) {
      const problems = [...scopeProblems(scopes), ...usageProblems(estimate, 'estimate')];
      if (problems.length) throw new InvalidBudgetError(problems);
    }
    const now = this.clock();
    const { plans, keys } = this.plan(scopes, now);
    const reserved = (refusal: Refusal | undefined): Reservation => {
      if (refusal) {
        const plan = plans[refusal.index];
        throw limitExceeded(plan.scope, refusal.field, new Date(plan.window.end));
      }
      return { keys, estimate: { micros: estimate.micros, tokens: estimate.tokens }, done: false };
    };
    const refusal = plans.length ? this.store.tryCharge(plans, estimate, now) : undefined;
    return refusal instanceof Promise ? refusal.then(reserved) : reserved(refusal);
  }

  settle(reservation: Reservation, actual: Usage): StoreAnswer<void> {
    if (!isUsage(actual)) throw new InvalidBudgetError(usageProblems(actual, 'actual'));
    return this.finish(reservation, { micros: actual.micros - reservation.estimate.micros, tokens: actual.tokens - reservation.estimate.tokens, requests: 0 });
  }

  release(reservation: Reservation): StoreAnswer<void> {
    return this.finish(reservation, { micros: -reservation.estimate.micros, tokens: -reservation.estimate.tokens, requests: -1 });
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private finish(reservation: Reservation, delta: Usage & { requests: number }): StoreAnswer<void> {
    if (reservation.done) return;
    reservation.done = true;
    if (reservation.keys.length === 0 || (delta.micros === 0 && delta.tokens === 0 && delta.requests === 0)) return;
    return this.store.adjust(reservation.keys, delta);
  }

  private plan(scopes: readonly MeteredScope[], now: number): Planned {
    const known = this.planned.get(scopes);
    if (known && now >= known.from && now < known.until) return known;
    const plans = planCounters(scopes, now, this.keyPrefix, this.windows);
    const planned: Planned = {
      plans,
      keys: plans.map((plan) => plan.key),
      from: Math.max(...plans.map((plan) => plan.window.start)),
      until: Math.min(...plans.map((plan) => plan.window.end)),
    };
    this.planned.set(scopes, planned);
    return planned;
  }
}

function isUsage(usage: Usage): boolean {
  return isCount(usage?.micros) && isCount(usage?.tokens);
}
