import { type BudgetRuleStore, MemoryBudgetRuleStore, RedisBudgetRuleStore } from './budget-rule-store';
import type { BudgetsSettings } from './budgets-settings';

/** The run-time rule store of the configured kind, with its first read done (Redis). */
export async function createBudgetRuleStore(settings: BudgetsSettings): Promise<BudgetRuleStore> {
  if (settings.store.kind === 'memory') return new MemoryBudgetRuleStore();
  const store = new RedisBudgetRuleStore(settings.store.url, settings.store.keyPrefix, settings.refreshMs);
  await store.start();
  return store;
}
