/**
 * Batches ledger entries on their way to the store: a write when `batchSize` entries wait or every
 * `flushIntervalMs`, one write at a time, and a final flush that waits for everything queued. A failed
 * write keeps its entries for the next attempt, up to `maxPending`; beyond that the oldest are dropped and
 * counted, so a store outage cannot exhaust memory.
 */
import type { LedgerEntry } from './ledger-entry';
import type { LedgerStore } from './ledger-store';

export interface LedgerWriterOptions {
  batchSize: number;
  flushIntervalMs: number;
  /** Entries held while the store is failing; the oldest beyond this are dropped. */
  maxPending: number;
  /** Told about a failed write (never with entry contents). */
  onWriteError?: (error: unknown) => void;
}

export class LedgerWriter {
  private pending: LedgerEntry[] = [];
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private droppedCount = 0;
  private closed = false;

  constructor(
    private readonly store: LedgerStore,
    private readonly options: LedgerWriterOptions,
  ) {
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    this.timer.unref();
  }

  /** Queues one entry; never waits for the store. Entries after {@link close} are dropped and counted. */
  add(entry: LedgerEntry): void {
    if (this.closed) {
      this.droppedCount += 1;
      return;
    }
    this.pending.push(entry);
    if (this.pending.length >= this.options.batchSize) void this.flush();
  }

  /** Writes everything queued so far, in batches; resolves when those writes have ended (failed ones requeued). */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.writePending());
    return this.writing;
  }

  /** Stops the timer and flushes; entries added later are dropped. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    this.closed = true;
  }

  get queued(): number {
    return this.pending.length;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  private async writePending(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.options.batchSize);
      try {
        await this.store.write(batch);
      } catch (error) {
        this.pending.unshift(...batch);
        const excess = this.pending.length - this.options.maxPending;
        if (excess > 0) {
          this.pending.splice(0, excess);
          this.droppedCount += excess;
        }
        this.options.onWriteError?.(error);
        return;
      }
    }
  }
}
