/**
 * What the budget engine counts: per scope (tenant, sub-tenant, subject, key) and per window (a UTC minute for
 * RPM/TPM, a UTC day or month for budgets), money in integer micro-dollars (1 USD = 1_000_000), tokens and
 * requests. Pure: validation, windows and the merge of scopes that share a counter.
 */
export const SCOPE_KINDS = ['tenant', 'sub_tenant', 'subject', 'key'] as const;
export type ScopeKind = (typeof SCOPE_KINDS)[number];

export const BUDGET_PERIODS = ['day', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
/** `minute` is the window of RPM/TPM limits; budgets use day or month. */
export type CounterPeriod = BudgetPeriod | 'minute';

export interface ScopeLimit {
  micros?: number;
  tokens?: number;
  requests?: number;
}

/** One limited scope: at most `limit` per `period` window for the caller `id` of `kind`. */
export interface MeteredScope {
  kind: ScopeKind;
  id: string;
  period: CounterPeriod;
  limit: ScopeLimit;
}

/** What one call is expected (reserve) or found (settle) to cost. */
export interface Usage {
  micros: number;
  tokens: number;
}

export type LimitField = keyof ScopeLimit;

export interface UsageWindow {
  start: number;
  /** Start of the next window: when the counter resets. */
  end: number;
  /** Part of the counter key: `2026-11`, `2026-11-27`, `2026-11-27T06:12`. */
  label: string;
}

const MINUTE_MS = 60_000;

/** The UTC calendar window of `period` that holds `now` (ms since the epoch). */
export function windowOf(period: CounterPeriod, now: number): UsageWindow {
  if (period === 'minute') {
    const start = now - (now % MINUTE_MS);
    return { start, end: start + MINUTE_MS, label: new Date(start).toISOString().slice(0, 16) };
  }
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  if (period === 'month') {
    const start = Date.UTC(year, month, 1);
    return { start, end: Date.UTC(year, month + 1, 1), label: new Date(start).toISOString().slice(0, 7) };
  }
  const start = Date.UTC(year, month, date.getUTCDate());
  return { start, end: Date.UTC(year, month, date.getUTCDate() + 1), label: new Date(start).toISOString().slice(0, 10) };
}

/**
 * windowOf, remembered per period until the window ends: most calls then need no date arithmetic or
 * formatting (which was three quarters of a memory reserve's CPU time).
 */
export class WindowCache {
  private readonly windows = new Map<CounterPeriod, UsageWindow>();

  windowOf(period: CounterPeriod, now: number): UsageWindow {
    const known = this.windows.get(period);
    if (known && now >= known.start && now < known.end) return known;
    const window = windowOf(period, now);
    this.windows.set(period, window);
    return window;
  }
}

/** One counter the engine checks and moves: the strictest limit of every scope that maps to it. */
export interface CounterPlan {
  key: string;
  scope: MeteredScope;
  window: UsageWindow;
}

/**
 * The counters of a reserve call, one per (kind, id, period, window). Two scopes on the same counter (a tenant's
 * budget from the configuration and from the run-time store, say) would otherwise be charged twice; merged,
 * the smallest limit of each field applies.
 */
export function planCounters(scopes: readonly MeteredScope[], now: number, keyPrefix: string, windows = new WindowCache()): CounterPlan[] {
  const plans = new Map<string, CounterPlan>();
  for (const scope of scopes) {
    const window = windows.windowOf(scope.period, now);
    const key = `${keyPrefix}c:${scope.period}:${window.label}:${scope.kind}:${scope.id}`;
    const known = plans.get(key);
    plans.set(key, known ? { ...known, scope: { ...known.scope, limit: strictest(known.scope.limit, scope.limit) } } : { key, scope, window });
  }
  return [...plans.values()];
}

function strictest(a: ScopeLimit, b: ScopeLimit): ScopeLimit {
  const merged: ScopeLimit = {};
  for (const field of ['micros', 'tokens', 'requests'] as const) {
    const values = [a[field], b[field]].filter((value): value is number => value !== undefined);
    if (values.length) merged[field] = Math.min(...values);
  }
  return merged;
}

/** Problems of scopes handed to the engine, each naming the scope and field; empty when they are usable. */
export function scopeProblems(scopes: readonly MeteredScope[]): string[] {
  const problems: string[] = [];
  for (const scope of scopes) {
    const name = `${String(scope.kind)} ${JSON.stringify(scope.id)}`;
    if (!(SCOPE_KINDS as readonly string[]).includes(scope.kind)) problems.push(`scope kind must be one of ${SCOPE_KINDS.join(', ')}, got ${JSON.stringify(scope.kind)}`);
    if (typeof scope.id !== 'string' || scope.id.length === 0) problems.push(`${name}: id must be a non-empty string`);
    if (!['minute', ...BUDGET_PERIODS].includes(scope.period)) problems.push(`${name}: period must be day or month, got ${JSON.stringify(scope.period)}`);
    for (const field of ['micros', 'tokens', 'requests'] as const) {
      const value = scope.limit?.[field];
      if (value !== undefined && !isCount(value)) problems.push(`${name}: limit.${field} must be a non-negative integer, got ${JSON.stringify(value)}`);
    }
  }
  return problems;
}

export function usageProblems(usage: Usage, what: string): string[] {
  return (['micros', 'tokens'] as const)
    .filter((field) => !isCount(usage?.[field]))
    .map((field) => `${what}.${field} must be a non-negative integer, got ${JSON.stringify(usage?.[field])}`);
}

export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

export const MICROS_PER_USD = 1_000_000;

export function formatUsd(micros: number): string {
  return `$${(micros / MICROS_PER_USD).toFixed(micros % 10_000 === 0 ? 2 : 6)}`;
}
