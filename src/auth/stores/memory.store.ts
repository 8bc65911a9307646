import { EventEmitter } from 'node:events';
import type { KeyvStoreAdapter, StoredData } from 'keyv';

interface Entry {
  value: unknown;
  /** Epoch ms; 0 = no expiry. */
  expiresAt: number;
}

/**
 * In-process Keyv store with real expiry and a size bound. Keyv's default Map only drops an expired
 * entry when it is read again, so superseded permission-cache generations would pile up forever.
 */
export class MemoryStore extends EventEmitter implements KeyvStoreAdapter {
  readonly opts = { dialect: 'memory' };
  namespace?: string;
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly maxEntries = 100_000,
    sweepIntervalMs = 60_000,
  ) {
    super();
    this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.sweeper.unref();
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== 0 && entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value as StoredData<Value>;
  }

  async set(key: string, value: unknown, ttl?: number): Promise<boolean> {
    // Re-inserting moves the key to the end, so the Map's order is oldest-write first.
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expiresAt: ttl && ttl > 0 ? Date.now() + ttl : 0 });
    return true;
  }

  async delete(key: string): Promise<boolean> {
    return this.entries.delete(key);
  }

  async has(key: string): Promise<boolean> {
    return (await this.get(key)) !== undefined;
  }

  /** The store belongs to one namespace, so clearing it touches nothing else. */
  async clear(): Promise<void> {
    this.entries.clear();
  }

  async disconnect(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt !== 0 && entry.expiresAt <= now) this.entries.delete(key);
    }
  }
}
