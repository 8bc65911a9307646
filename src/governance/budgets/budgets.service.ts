import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { getPayload } from '../../auth/request-context';
import { type GovernanceRequestState, governanceOf } from '../governance-identity';
import { apiKeyOf } from '../governance-state';
import type { ApiKeyRecord } from '../keys/api-key-record';
import { claimLimits } from './budget-claims';
import type { BudgetEngine, OutputAllowance, Reservation, StoreAnswer } from './budget-engine';
import { InvalidBudgetError } from './budget-errors';
import type { BudgetRuleStore } from './budget-rule-store';
import { type BudgetRule, type IdentityLimits, type LimitRule, type RuleNames, type RuleSet, BODY_NAMES, parseRule, scopesFor } from './budget-rules';
import type { BudgetPeriod, MeteredScope, ScopeKind, Usage } from './budget-scope';
import { BUDGETS_SETTINGS, BUDGET_ENGINE, BUDGET_RULE_STORE } from './budgets.constants';
import type { BudgetsSettings } from './budgets-settings';

/**
 * Budgets and RPM/TPM of model calls for the identity on a request: reserve before the call (throws
 * BudgetExceededError or RateLimitExceededError), settle after it with the real figures, release when no
 * request went upstream. Also the rules set at run time, for the admin API and the CLI.
 */
@Injectable()
export class BudgetsService implements OnModuleDestroy {
  /**
   * The scopes of each caller state under the run-time rules they were resolved with. A state is one object per
   * caller (the shared token's, a key's for as long as its lookup is reused) and never changes; callers whose
   * JWT claims carry budgets are resolved on every request, since their claims are not part of the state.
   */
  private readonly resolved = new WeakMap<GovernanceRequestState, { runtime: RuleSet; scopes: readonly MeteredScope[] }>();

  constructor(
    @Inject(BUDGETS_SETTINGS) private readonly settings: BudgetsSettings,
    @Inject(BUDGET_ENGINE) private readonly engine: BudgetEngine,
    @Inject(BUDGET_RULE_STORE) private readonly rules: BudgetRuleStore,
  ) {}

  /**
   * The scopes the request's caller is held to; none for a request without a governance identity. An API key's
   * caller is also held to its key record's own budget, rpm and tpm. Bad budget claims in its JWT refuse the
   * request (400).
   */
  scopesFor(request: object): readonly MeteredScope[] {
    const state = governanceOf(request);
    if (!state) return [];
    const runtime = this.rules.current();
    const payload = this.settings.claims && state.identity.subjectKind === 'user' ? getPayload(request) : undefined;
    if (payload) {
      const read = claimLimits(payload as Record<string, unknown>, this.settings.claims!);
      if (!read.ok) throw new InvalidBudgetError(read.problems);
      return scopesFor(state, { config: this.settings.rules, runtime, key: keyLimits(apiKeyOf(state)), claims: read.limits });
    }
    const known = this.resolved.get(state);
    if (known?.runtime === runtime) return known.scopes;
    const scopes = scopesFor(state, { config: this.settings.rules, runtime, key: keyLimits(apiKeyOf(state)) });
    this.resolved.set(state, { runtime, scopes });
    return scopes;
  }

  async reserve(request: object, estimate: Usage): Promise<Reservation> {
    return this.engine.reserve(this.scopesFor(request), estimate);
  }

  /**
   * Reserves on scopes already computed (scopesFor), so a caller without any can skip the engine entirely;
   * `output`: the output part of the estimate, which the engine bounds by what the budgets have left.
   */
  reserveScopes(scopes: readonly MeteredScope[], estimate: Usage, output?: OutputAllowance): StoreAnswer<Reservation> {
    return this.engine.reserve(scopes, estimate, output);
  }

  settle(reservation: Reservation, actual: Usage): StoreAnswer<void> {
    return this.engine.settle(reservation, actual);
  }

  release(reservation: Reservation): StoreAnswer<void> {
    return this.engine.release(reservation);
  }

  async listRules(): Promise<{ configured: RuleSet; runtime: RuleSet }> {
    return { configured: this.settings.rules, runtime: await this.rules.load() };
  }

  /**
   * Checks and stores a run-time rule; InvalidBudgetError names every bad field. `authorize` sees the rule's
   * scope and id before it is stored, and throws to refuse it (an administrator of another tenant).
   */
  async setRule(
    input: unknown,
    names: RuleNames = BODY_NAMES,
    authorize?: (scope: ScopeKind, id: string) => void,
  ): Promise<{ budget?: BudgetRule; limit?: LimitRule }> {
    const parsed = parseRule(input, names);
    if (!parsed.ok) throw new InvalidBudgetError(parsed.problems);
    const rule = (parsed.budget ?? parsed.limit)!;
    authorize?.(rule.scope, rule.id);
    const rules = { ...(parsed.budget ? { budget: parsed.budget } : {}), ...(parsed.limit ? { limit: parsed.limit } : {}) };
    await this.rules.put(rules);
    return rules;
  }

  deleteRules(scope: ScopeKind, id: string, period?: BudgetPeriod): Promise<number> {
    return this.rules.remove(scope, id, period);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([this.engine.close(), this.rules.close()]);
  }
}

/** An API key's own budget, rpm and tpm, in the rules' terms. */
function keyLimits(record: ApiKeyRecord | undefined): IdentityLimits | undefined {
  if (!record || (record.budget === undefined && record.rpm === undefined && record.tpm === undefined)) return undefined;
  return {
    ...(record.budget
      ? {
          budget: {
            period: record.budget.period,
            ...(record.budget.microUsd !== undefined ? { micros: record.budget.microUsd } : {}),
            ...(record.budget.tokens !== undefined ? { tokens: record.budget.tokens } : {}),
          },
        }
      : {}),
    ...(record.rpm !== undefined ? { rpm: record.rpm } : {}),
    ...(record.tpm !== undefined ? { tpm: record.tpm } : {}),
  };
}
