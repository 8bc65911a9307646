import { InvalidBudgetError, limitExceeded } from './budget-errors';
import { type CounterPlan, type LimitField, type MeteredScope, type ScopeLimit, type Usage, WindowCache, isCount, planCounters, scopeProblems, usageProblems } from './budget-scope';

/** Counters charged by one reserve call; settle or release it exactly once (later calls do nothing). */
export interface Reservation {
  /** The store keys of the counters charged. */
  readonly keys: readonly string[];
  /** What was charged: the fixed part of the estimate and the output tokens granted. */
  readonly estimate: Usage;
  /** Output tokens granted (the call may be sent at most these), when the reserve was given an allowance. */
  readonly outputTokens: number;
  done: boolean;
}

/**
 * The output part of a call's estimate, which the store bounds by what is left: up to `wanted` output tokens,
 * at least `least`, each costing `picosPerToken` (millionths of a micro-dollar: a price in USD per million
 * tokens times 1,000,000, an integer). The store grants the most that every counter's remaining budget covers,
 * in the same atomic step as the charge, so the last calls of a budget end at it instead of being refused.
 */
export interface OutputAllowance {
  wanted: number;
  least: number;
  picosPerToken: number;
}

/** No output part: the estimate is charged as it is (embeddings, and callers that bound nothing). */
export const NO_OUTPUT: OutputAllowance = { wanted: 0, least: 0, picosPerToken: 0 };

export const PICOS_PER_MICRO = 1_000_000;

/** The counter plans of one scopes array, valid while every one of their windows is. */
interface Planned {
  plans: CounterPlan[];
  keys: string[];
  from: number;
  until: number;
}

/** A counter over its limit, as a store reports it: which plan, which field, and what that field held. */
export interface Refusal {
  index: number;
  field: LimitField;
  used: number;
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
   * With an `output` allowance, `estimate` is the fixed part (the input) and the output tokens granted are
   * added to it.
   */
  reserve(scopes: readonly MeteredScope[], estimate: Usage, output?: OutputAllowance): StoreAnswer<Reservation>;
  /** Corrects the reservation to what the call really cost (the request stays counted). */
  settle(reservation: Reservation, actual: Usage): StoreAnswer<void>;
  /**
   * No request went upstream: gives back the estimate, not the request. An admitted call counts against RPM
   * whatever became of it, so work done before sending (image downloads, an unreachable upstream) is limited too.
   */
  release(reservation: Reservation): StoreAnswer<void>;
  close(): Promise<void>;
}

/** The store part of an engine: where counters live. The checks and errors are the same for every store. */
export interface CounterStore {
  /**
   * Atomically: refuse with the first counter that would pass its limit even with `output.least`, else grant
   * the most output tokens up to `output.wanted` that every counter covers, charge every counter with the
   * estimate and that output, and answer the tokens granted.
   */
  tryCharge(plans: readonly CounterPlan[], estimate: Usage, output: OutputAllowance, now: number): StoreAnswer<Refusal | number>;
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

  reserve(scopes: readonly MeteredScope[], estimate: Usage, output: OutputAllowance = NO_OUTPUT): StoreAnswer<Reservation> {
    // A scopes array planned before was checked then.
    if (!isUsage(estimate) || !isAllowance(output) || !this.planned.has(scopes)) {
      const problems = [...scopeProblems(scopes), ...usageProblems(estimate, 'estimate'), ...allowanceProblems(output)];
      if (problems.length) throw new InvalidBudgetError(problems);
    }
    const now = this.clock();
    const { plans, keys } = this.plan(scopes, now);
    const reserved = (answer: Refusal | number): Reservation => {
      if (typeof answer !== 'number') {
        const plan = plans[answer.index];
        const needed = answer.field === 'micros' ? estimate.micros + outputMicros(output.least, output) : answer.field === 'tokens' ? estimate.tokens + output.least : 1;
        throw limitExceeded(plan.scope, answer.field, new Date(plan.window.end), { used: answer.used, needed });
      }
      return { keys, estimate: { micros: estimate.micros + outputMicros(answer, output), tokens: estimate.tokens + answer }, outputTokens: answer, done: false };
    };
    const answer = plans.length ? this.store.tryCharge(plans, estimate, output, now) : output.wanted;
    return answer instanceof Promise ? answer.then(reserved) : reserved(answer);
  }

  settle(reservation: Reservation, actual: Usage): StoreAnswer<void> {
    if (!isUsage(actual)) throw new InvalidBudgetError(usageProblems(actual, 'actual'));
    return this.finish(reservation, { micros: actual.micros - reservation.estimate.micros, tokens: actual.tokens - reservation.estimate.tokens, requests: 0 });
  }

  release(reservation: Reservation): StoreAnswer<void> {
    return this.finish(reservation, { micros: -reservation.estimate.micros, tokens: -reservation.estimate.tokens, requests: 0 });
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

function isAllowance(output: OutputAllowance): boolean {
  return isCount(output.wanted) && isCount(output.least) && output.least <= output.wanted && isCount(output.picosPerToken);
}

function allowanceProblems(output: OutputAllowance): string[] {
  const problems = (['wanted', 'least', 'picosPerToken'] as const)
    .filter((field) => !isCount(output?.[field]))
    .map((field) => `output.${field} must be a non-negative integer, got ${JSON.stringify(output?.[field])}`);
  if (problems.length === 0 && output.least > output.wanted) problems.push(`output.least (${output.least}) must not exceed output.wanted (${output.wanted})`);
  return problems;
}

/** Micro-dollars charged for `tokens` output tokens of an allowance: rounded up, as the store charges them. */
export function outputMicros(tokens: number, output: OutputAllowance): number {
  return output.picosPerToken === 0 ? 0 : Math.ceil((tokens * output.picosPerToken) / PICOS_PER_MICRO);
}

/**
 * The output tokens one counter covers for a call (at most `output.wanted`), or the field that refuses it:
 * the Redis script's rule, in the same order (micros, tokens, requests).
 */
export function counterGrant(limit: ScopeLimit, used: { micros: number; tokens: number; requests: number }, estimate: Usage, output: OutputAllowance): number | LimitField {
  let granted = output.wanted;
  if (limit.micros !== undefined) {
    const left = limit.micros - used.micros - estimate.micros;
    const fits = left < 0 ? -1 : output.picosPerToken > 0 ? Math.floor((left * PICOS_PER_MICRO) / output.picosPerToken) : granted;
    if (fits < output.least) return 'micros';
    granted = Math.min(granted, fits);
  }
  if (limit.tokens !== undefined) {
    const fits = limit.tokens - used.tokens - estimate.tokens;
    if (fits < output.least) return 'tokens';
    granted = Math.min(granted, fits);
  }
  if (limit.requests !== undefined && used.requests + 1 > limit.requests) return 'requests';
  return granted;
}
