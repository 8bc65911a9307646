import type { LedgerEntry } from './ledger-entry';
import type { UsageQuery, UsageRow } from './usage-query';

/** Where ledger entries are kept; writes come in batches from {@link LedgerWriter}. */
export interface LedgerStore {
  write(entries: readonly LedgerEntry[]): Promise<void>;
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /** Folds entries older than the retention into daily roll-ups; answers how many entries were folded. */
  rollUp(now: number): Promise<number>;
  close(): Promise<void>;
}
