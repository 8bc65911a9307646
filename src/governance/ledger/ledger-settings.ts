import type { PricingTable } from './pricing';

export type LedgerStoreSettings =
  | { kind: 'memory'; maxEntries: number }
  | { kind: 'postgres'; url: string; table: string; retentionDays: number };

/** `governance.ledger` and `governance.pricing`, resolved (src/config/ledger-config.mapper.ts). */
export interface LedgerSettings {
  enabled: boolean;
  store: LedgerStoreSettings;
  batchSize: number;
  flushIntervalMs: number;
  pricing: PricingTable;
  /** `governance.pricing.allow_unpriced`: callers held to a dollar budget may call models without a price. */
  allowUnpriced?: boolean;
  /** Distinct tenant label values on the Prometheus counters before `other`. */
  metricsMaxTenants: number;
}

export const LEDGER_DEFAULTS = {
  table: 'tollgate_ledger',
  retentionDays: 31,
  maxEntries: 100_000,
  batchSize: 200,
  flushIntervalMs: 1000,
  metricsMaxTenants: 100,
} as const;
