import type { ClaimMapping } from './budget-claims';
import type { RuleSet } from './budget-rules';

/** Where counters and run-time rules live: this process, or Redis so that every process shares them. */
export type BudgetsStore = { kind: 'memory' } | { kind: 'redis'; url: string; keyPrefix: string };

export const DEFAULT_BUDGETS_KEY_PREFIX = 'tollgate:budgets:';
export const DEFAULT_RULES_REFRESH_MS = 1000;

/** `governance.budgets`, `governance.limits` and `governance.claims`, mapped. */
export interface BudgetsSettings {
  store: BudgetsStore;
  /** How long a process serves the run-time rules before reading the store again. */
  refreshMs: number;
  /** Rules from the configuration (budgets and rpm/tpm). */
  rules: RuleSet;
  /** Set when `governance.claims` is: JWT claims carrying the subject's own limits. */
  claims?: ClaimMapping;
}
