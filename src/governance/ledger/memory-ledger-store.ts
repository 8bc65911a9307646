import type { ModelCallOperation, ModelCallStatus } from '../../ai/client/model-call';
import type { LedgerEntry } from './ledger-entry';
import type { LedgerStore } from './ledger-store';
import { aggregate, type UsageQuery, type UsageRow } from './usage-query';

/** The entry fields held as indexes into the store's string table (few distinct values, repeated on every entry). */
const TEXT_FIELDS = ['tenant', 'subTenant', 'subject', 'keyId', 'route', 'provider', 'model', 'operation', 'status'] as const;
type TextField = (typeof TEXT_FIELDS)[number];
const NO_TEXT = -1;
/** The string table is rebuilt from the live entries once it holds this many values and twice as many as then. */
const MIN_TABLE_REBUILD = 4096;
/** Slots the columns start with; they double as entries come, up to the bound, so an idle ring costs ~nothing. */
const INITIAL_SLOTS = 1024;

/**
 * This process's ledger: the newest `maxEntries` entries in a ring, the oldest overwritten first (a write
 * costs the same at any fill level). The columns grow by doubling until they reach `maxEntries`, so a ring
 * that is never filled never holds its bound's memory. For development and single-process use; nothing survives a restart
 * (docs/governance.md#ledger-and-usage).
 *
 * The ring is columns of typed arrays, and the repeated strings (tenant, model...) indexes into one table.
 * Entry objects kept for their lifetime are each promoted to the old generation and collected there once
 * overwritten: under load, a full ring of objects grew the server's RSS by ~180 MiB, these columns by ~60
 * (bench/RESULTS.md, 2026-11-27). Only request ids, unique per entry, stay strings.
 */
export class MemoryLedgerStore implements LedgerStore {
  private time: Float64Array;
  private inputTokens: Float64Array;
  private outputTokens: Float64Array;
  private cachedTokens: Float64Array;
  /** NaN for an unpriced call. */
  private costMicros: Float64Array;
  private estimated: Uint8Array;
  /** TEXT_FIELDS.length table indexes per entry, NO_TEXT for null. */
  private text: Int32Array;
  private requestIds: Array<string | null>;
  /** Slots the columns have now; at most maxEntries. */
  private capacity: number;
  private strings: string[] = [];
  private stringIndex = new Map<string, number>();
  private rebuildAt = MIN_TABLE_REBUILD;
  /** Where the next entry goes. */
  private next = 0;
  private size = 0;
  /** Entries overwritten to keep the bound, reported by {@link dropped}. */
  private droppedCount = 0;

  constructor(private readonly maxEntries: number) {
    this.capacity = Math.min(maxEntries, INITIAL_SLOTS);
    this.time = new Float64Array(this.capacity);
    this.inputTokens = new Float64Array(this.capacity);
    this.outputTokens = new Float64Array(this.capacity);
    this.cachedTokens = new Float64Array(this.capacity);
    this.costMicros = new Float64Array(this.capacity);
    this.estimated = new Uint8Array(this.capacity);
    this.text = new Int32Array(this.capacity * TEXT_FIELDS.length);
    this.requestIds = new Array<string | null>(this.capacity).fill(null);
  }

  async write(entries: readonly LedgerEntry[]): Promise<void> {
    for (const entry of entries) {
      if (this.size === this.capacity && this.capacity < this.maxEntries) this.grow();
      const slot = this.next;
      this.time[slot] = entry.time;
      this.inputTokens[slot] = entry.inputTokens;
      this.outputTokens[slot] = entry.outputTokens;
      this.cachedTokens[slot] = entry.cachedTokens;
      this.costMicros[slot] = entry.costMicros ?? Number.NaN;
      this.estimated[slot] = entry.estimated ? 1 : 0;
      const base = slot * TEXT_FIELDS.length;
      for (let field = 0; field < TEXT_FIELDS.length; field++) this.text[base + field] = this.indexOf(entry[TEXT_FIELDS[field]]);
      this.requestIds[slot] = entry.requestId;
      this.next = (slot + 1) % this.capacity;
      if (this.size < this.maxEntries) this.size += 1;
      else this.droppedCount += 1;
    }
    if (this.strings.length >= this.rebuildAt) this.rebuildStrings();
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
    this.requestIds.fill(null);
    this.strings = [];
    this.stringIndex = new Map();
    this.size = 0;
    this.next = 0;
  }

  /** Oldest first. */
  private *entries(): Generator<LedgerEntry> {
    const start = (this.next - this.size + this.capacity) % this.capacity;
    for (let i = 0; i < this.size; i++) yield this.entryAt((start + i) % this.capacity);
  }

  /** Doubles the columns (up to maxEntries). Called only while the ring has not wrapped: slots 0..size-1 are in order. */
  private grow(): void {
    const capacity = Math.min(this.maxEntries, this.capacity * 2);
    const widen = <T extends Float64Array | Uint8Array | Int32Array>(column: T, make: (length: number) => T, width = 1): T => {
      const wider = make(capacity * width);
      wider.set(column);
      return wider;
    };
    this.time = widen(this.time, (n) => new Float64Array(n));
    this.inputTokens = widen(this.inputTokens, (n) => new Float64Array(n));
    this.outputTokens = widen(this.outputTokens, (n) => new Float64Array(n));
    this.cachedTokens = widen(this.cachedTokens, (n) => new Float64Array(n));
    this.costMicros = widen(this.costMicros, (n) => new Float64Array(n));
    this.estimated = widen(this.estimated, (n) => new Uint8Array(n));
    this.text = widen(this.text, (n) => new Int32Array(n), TEXT_FIELDS.length);
    for (let slot = this.capacity; slot < capacity; slot++) this.requestIds.push(null);
    this.next = this.size;
    this.capacity = capacity;
  }

  private entryAt(slot: number): LedgerEntry {
    const text = (field: TextField) => {
      const index = this.text[slot * TEXT_FIELDS.length + TEXT_FIELDS.indexOf(field)];
      return index === NO_TEXT ? null : this.strings[index];
    };
    const cost = this.costMicros[slot];
    return {
      time: this.time[slot],
      requestId: this.requestIds[slot],
      tenant: text('tenant'),
      subTenant: text('subTenant'),
      subject: text('subject'),
      keyId: text('keyId'),
      route: text('route'),
      provider: text('provider')!,
      model: text('model')!,
      operation: text('operation') as ModelCallOperation,
      inputTokens: this.inputTokens[slot],
      outputTokens: this.outputTokens[slot],
      cachedTokens: this.cachedTokens[slot],
      costMicros: Number.isNaN(cost) ? null : cost,
      status: text('status') as ModelCallStatus,
      estimated: this.estimated[slot] === 1,
    };
  }

  private indexOf(value: string | null): number {
    if (value === null) return NO_TEXT;
    let index = this.stringIndex.get(value);
    if (index === undefined) {
      index = this.strings.length;
      this.strings.push(value);
      this.stringIndex.set(value, index);
    }
    return index;
  }

  /** Drops strings no live entry refers to any more (subjects come and go), renumbering the rest. */
  private rebuildStrings(): void {
    const old = this.strings;
    this.strings = [];
    this.stringIndex = new Map();
    const start = (this.next - this.size + this.capacity) % this.capacity;
    for (let i = 0; i < this.size; i++) {
      const base = ((start + i) % this.capacity) * TEXT_FIELDS.length;
      for (let field = 0; field < TEXT_FIELDS.length; field++) {
        const index = this.text[base + field];
        if (index !== NO_TEXT) this.text[base + field] = this.indexOf(old[index]);
      }
    }
    this.rebuildAt = Math.max(MIN_TABLE_REBUILD, 2 * this.strings.length);
  }
}

