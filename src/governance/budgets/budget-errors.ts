import { InvalidRequestError, TollgateError } from '../../common/errors';
import { type LimitField, type MeteredScope, formatUsd } from './budget-scope';

const SCOPE_NAMES = { tenant: 'tenant', sub_tenant: 'sub-tenant', subject: 'subject', key: 'key' } as const;
const PERIOD_NAMES = { day: 'daily', month: 'monthly', minute: 'per-minute' } as const;

function describeLimit(scope: MeteredScope, field: LimitField): string {
  const amount = scope.limit[field] ?? 0;
  const what = field === 'micros' ? formatUsd(amount) : `${amount} ${field}`;
  const kind = field === 'micros' ? 'budget' : scope.period === 'minute' ? `${field} limit` : 'token budget';
  return `the ${PERIOD_NAMES[scope.period]} ${kind} of ${SCOPE_NAMES[scope.kind]} ${scope.id} (${what})`;
}

/**
 * What a refused counter held and what the call needed of it (its estimate: the input and the least output
 * the budget may bound it to). Without it the refusal is described as a call over the limit.
 */
export interface RefusalDetail {
  used: number;
  needed: number;
}

/**
 * Why a counter refused, in words: its limit is spent (nothing a caller sends can fit), or what remains is
 * less than this call's estimate (a smaller call may fit).
 */
function describeRefusal(scope: MeteredScope, field: LimitField, detail: RefusalDetail | undefined): string {
  const limit = describeLimit(scope, field);
  const amount = scope.limit[field] ?? 0;
  if (!detail) return `This call would exceed ${limit}`;
  if (detail.used >= amount) return `${capitalise(limit)} is spent`;
  const remaining = amount - detail.used;
  if (field === 'micros') {
    return `This call's estimate (${formatUsd(detail.needed)}) is more than the ${formatUsd(remaining)} left of ${limit}: the estimate counts everything sent and the fewest output tokens a call is granted (16, or what its thinking needs); send less`;
  }
  return `This call's estimate (${detail.needed} tokens) is more than the ${remaining} left of ${limit}: the estimate counts everything sent and the fewest output tokens a call is granted (16, or what its thinking needs); send less`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A call that would take a scope past its day or month budget: 429 `budget_exceeded` until `resetAt`. */
export class BudgetExceededError extends TollgateError {
  override readonly type: string = 'budget_exceeded';
  constructor(
    readonly scope: MeteredScope,
    readonly field: LimitField,
    readonly resetAt: Date,
    readonly detail?: RefusalDetail,
  ) {
    super(`${describeRefusal(scope, field, detail)}; it resets at ${resetAt.toISOString()}.`);
  }
}

/**
 * A call over an identity's RPM or TPM: 429 with the existing `rate_limited` type of the server's request
 * limits. Not the AI client's RateLimitError: that one means an upstream refused and is retried.
 */
export class RateLimitExceededError extends TollgateError {
  override readonly type: string = 'rate_limited';
  constructor(
    readonly scope: MeteredScope,
    readonly field: LimitField,
    readonly resetAt: Date,
    readonly detail?: RefusalDetail,
  ) {
    super(`${describeRefusal(scope, field, detail)}; retry after ${resetAt.toISOString()}.`);
  }
}

/** The shared counter store did not answer: budgets fail closed (docs/decisions.md D6), 503. */
export class BudgetStoreUnavailableError extends TollgateError {
  override readonly type: string = 'budget_store_unavailable';
  constructor() {
    super('The budget store is unavailable; the call was not made. Retry shortly.');
  }
}

/** Bad scopes, estimates or budget rules: the message names every bad field. */
export class InvalidBudgetError extends InvalidRequestError {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

export function limitExceeded(scope: MeteredScope, field: LimitField, resetAt: Date, detail?: RefusalDetail): BudgetExceededError | RateLimitExceededError {
  return scope.period === 'minute' ? new RateLimitExceededError(scope, field, resetAt, detail) : new BudgetExceededError(scope, field, resetAt, detail);
}
