import { CountingBudgetEngine, type BudgetEngine } from './budget-engine';
import { MemoryCounterStore } from './memory-counter-store';
import { RedisCounterStore } from './redis-counter-store';

export type GovernanceStore = { kind: 'memory' } | { kind: 'redis'; url: string; keyPrefix: string };

export const DEFAULT_BUDGETS_KEY_PREFIX = 'tollgate:budgets:';

/** The engine on the configured store, connected (Redis) before it is returned. */
export async function createBudgetEngine(store: GovernanceStore): Promise<BudgetEngine> {
  if (store.kind === 'memory') return new CountingBudgetEngine(new MemoryCounterStore(), DEFAULT_BUDGETS_KEY_PREFIX);
  const counters = new RedisCounterStore(store.url);
  await counters.connect();
  return new CountingBudgetEngine(counters, store.keyPrefix);
}
