import { CountingBudgetEngine, type BudgetEngine } from './budget-engine';
import { MemoryCounterStore } from './memory-counter-store';
import { RedisCounterStore } from './redis-counter-store';
import { type BudgetsStore, DEFAULT_BUDGETS_KEY_PREFIX } from './budgets-settings';

/** The engine on the configured store, connected (Redis) before it is returned. */
export async function createBudgetEngine(store: BudgetsStore): Promise<BudgetEngine> {
  if (store.kind === 'memory') return new CountingBudgetEngine(new MemoryCounterStore(), DEFAULT_BUDGETS_KEY_PREFIX);
  const counters = new RedisCounterStore(store.url);
  await counters.connect();
  return new CountingBudgetEngine(counters, store.keyPrefix);
}
