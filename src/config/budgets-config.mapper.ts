import { DEFAULT_CLAIM_MAPPING } from '../governance/budgets/budget-claims';
import { type BudgetRule, type LimitRule, parseRule } from '../governance/budgets/budget-rules';
import { type BudgetsSettings, DEFAULT_BUDGETS_KEY_PREFIX, DEFAULT_RULES_REFRESH_MS } from '../governance/budgets/budgets-settings';
import { ConfigError } from './config.error';
import type { ConfigDocument } from './config.types';

/** `governance.budgets`, `.limits` and `.claims`; rules the schema cannot state are refused here, each naming its key. */
export function toBudgetsSettings(document: ConfigDocument, source: string): BudgetsSettings {
  const governance = document.governance ?? {};
  const section = governance.budgets ?? {};
  const problems: string[] = [];
  const storeKind = section.store ?? 'memory';
  if (storeKind === 'redis' && section.url === undefined) problems.push('governance.budgets.url: is required for store redis');
  if (storeKind === 'memory' && section.url !== undefined) problems.push('governance.budgets.url: applies to store redis only');
  if (storeKind === 'memory' && section.key_prefix !== undefined) problems.push('governance.budgets.key_prefix: applies to store redis only');

  const budgets: BudgetRule[] = [];
  const seenBudgets = new Set<string>();
  (section.rules ?? []).forEach((input, index) => {
    const key = `governance.budgets.rules[${index}]`;
    const parsed = parseRule(input, { rule: key, field: (field) => `${key}.${field}` });
    if (!parsed.ok) return problems.push(...parsed.problems);
    if (parsed.limit) return problems.push(`${key}: rpm and tpm belong in governance.limits.rules`);
    const identity = `${parsed.budget!.scope} ${parsed.budget!.id} ${parsed.budget!.period}`;
    if (seenBudgets.has(identity)) problems.push(`${key}: another rule sets the ${parsed.budget!.period} budget of ${parsed.budget!.scope} ${parsed.budget!.id}`);
    seenBudgets.add(identity);
    budgets.push(parsed.budget!);
  });

  const limits: LimitRule[] = [];
  const seenLimits = new Set<string>();
  (governance.limits?.rules ?? []).forEach((input, index) => {
    const key = `governance.limits.rules[${index}]`;
    const parsed = parseRule(input, { rule: key, field: (field) => `${key}.${field}` });
    if (!parsed.ok) return problems.push(...parsed.problems);
    if (parsed.budget) return problems.push(`${key}: usd, tokens and period belong in governance.budgets.rules`);
    const identity = `${parsed.limit!.scope} ${parsed.limit!.id}`;
    if (seenLimits.has(identity)) problems.push(`${key}: another rule sets the limits of ${parsed.limit!.scope} ${parsed.limit!.id}`);
    seenLimits.add(identity);
    limits.push(parsed.limit!);
  });

  if (problems.length) throw new ConfigError(problems.map((problem) => `${source}: ${problem}`));
  const claims = governance.claims;
  return {
    store:
      storeKind === 'redis' ? { kind: 'redis', url: section.url!, keyPrefix: section.key_prefix ?? DEFAULT_BUDGETS_KEY_PREFIX } : { kind: 'memory' },
    refreshMs: section.refresh === undefined ? DEFAULT_RULES_REFRESH_MS : Math.round(section.refresh * 1000),
    rules: { budgets, limits },
    ...(claims
      ? {
          claims: {
            budgetUsd: claims.budget_usd ?? DEFAULT_CLAIM_MAPPING.budgetUsd,
            budgetTokens: claims.budget_tokens ?? DEFAULT_CLAIM_MAPPING.budgetTokens,
            budgetPeriod: claims.budget_period ?? DEFAULT_CLAIM_MAPPING.budgetPeriod,
            rpm: claims.rpm ?? DEFAULT_CLAIM_MAPPING.rpm,
            tpm: claims.tpm ?? DEFAULT_CLAIM_MAPPING.tpm,
          },
        }
      : {}),
  };
}
