import type { LedgerEntry } from './ledger-entry';
import type { LedgerStore } from './ledger-store';
import { aggregate, type UsageQuery, type UsageRow } from './usage-query';

/**
 * This process's ledger: the newest `maxEntries` entries, the oldest dropped first. For development and
 * single-process use; nothing survives a restart (docs/governance.md#ledger-and-usage).
 */
export class MemoryLedgerStore implements LedgerStore {
  private entries: LedgerEntry[] = [];
  /** Entries dropped to keep the bound, reported by {@link dropped}. */
  private droppedCount = 0;

  constructor(private readonly maxEntries: number) {}

  async write(entries: readonly LedgerEntry[]): Promise<void> {
    this.entries.push(...entries);
    const excess = this.entries.length - this.maxEntries;
    if (excess > 0) {
      this.entries = this.entries.slice(excess);
      this.droppedCount += excess;
    }
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    return aggregate(this.entries, query);
  }

  /** The bound already keeps memory in check; there is nothing to fold. */
  async rollUp(): Promise<number> {
    return 0;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  async close(): Promise<void> {
    this.entries = [];
  }
}
