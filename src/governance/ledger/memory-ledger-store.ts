import type { LedgerEntry } from './ledger-entry';
import type { LedgerStore } from './ledger-store';
import { aggregate, type UsageQuery, type UsageRow } from './usage-query';

/**
 * This process's ledger: the newest `maxEntries` entries in a ring, the oldest overwritten first (a write
 * costs the same at any fill level). For development and single-process use; nothing survives a restart
 * (docs/governance.md#ledger-and-usage).
 */
export class MemoryLedgerStore implements LedgerStore {
  private readonly ring: Array<LedgerEntry | undefined>;
  /** Where the next entry goes. */
  private next = 0;
  private size = 0;
  /** Entries overwritten to keep the bound, reported by {@link dropped}. */
  private droppedCount = 0;

  constructor(private readonly maxEntries: number) {
    this.ring = new Array<LedgerEntry | undefined>(maxEntries);
  }

  async write(entries: readonly LedgerEntry[]): Promise<void> {
    for (const entry of entries) {
      this.ring[this.next] = entry;
      this.next = (this.next + 1) % this.maxEntries;
      if (this.size < this.maxEntries) this.size += 1;
      else this.droppedCount += 1;
    }
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    return aggregate(this.entries(), query);
  }

  /** The bound already keeps memory in check; there is nothing to fold. */
  async rollUp(): Promise<number> {
    return 0;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  async close(): Promise<void> {
    this.ring.fill(undefined);
    this.size = 0;
    this.next = 0;
  }

  /** Oldest first. */
  private *entries(): Generator<LedgerEntry> {
    const start = (this.next - this.size + this.maxEntries) % this.maxEntries;
    for (let i = 0; i < this.size; i++) yield this.ring[(start + i) % this.maxEntries]!;
  }
}
