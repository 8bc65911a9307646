import type { ApiKeyRecord, MutableKeySettings } from './api-key-record';
import { type KeyStore, withSettings } from './key-store';

/** Keys in this process only: the default, for a single instance or tests; lost on restart. */
export class MemoryKeyStore implements KeyStore {
  private readonly byId = new Map<string, ApiKeyRecord>();
  private readonly idByHash = new Map<string, string>();

  async create(record: ApiKeyRecord): Promise<void> {
    this.byId.set(record.id, structuredClone(record));
    this.idByHash.set(record.hash, record.id);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const id = this.idByHash.get(hash);
    return id === undefined ? undefined : this.get(id);
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const record = this.byId.get(id);
    return record && structuredClone(record);
  }

  async list(filter: { tenant?: string } = {}): Promise<ApiKeyRecord[]> {
    return [...this.byId.values()]
      .filter((record) => filter.tenant === undefined || record.tenant === filter.tenant)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
      .map((record) => structuredClone(record));
  }

  async update(id: string, settings: MutableKeySettings): Promise<ApiKeyRecord | undefined> {
    const record = this.byId.get(id);
    if (!record) return undefined;
    this.byId.set(id, withSettings(record, structuredClone(settings)));
    return this.get(id);
  }

  async revoke(id: string, at: string): Promise<ApiKeyRecord | undefined> {
    const record = this.byId.get(id);
    if (!record) return undefined;
    record.revokedAt ??= at;
    return this.get(id);
  }

  async close(): Promise<void> {}
}
