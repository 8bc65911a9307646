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

/**
 * What one entry of the memory store holds at most, for sizing it by bytes: its columns (5 doubles, a byte,
 * 9 string-table indexes), the request id's slot, and the id itself (a V8 string header and up to 64 one-byte
 * characters). The repeated strings (tenants, models) are shared by all entries and not counted.
 */
export const LEDGER_ENTRY_BYTES = 5 * 8 + 1 + 9 * 4 + 8 + 16 + 64;

export const LEDGER_DEFAULTS = {
  table: 'tollgate_ledger',
  retentionDays: 31,
  /** The memory store's bound when max_entries is not given: 16 MiB, ~100,000 entries. */
  maxBytes: 16 * 1024 * 1024,
  batchSize: 200,
  flushIntervalMs: 1000,
  metricsMaxTenants: 100,
} as const;
