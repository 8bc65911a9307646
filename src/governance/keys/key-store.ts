import type { ApiKeyRecord, MutableKeySettings } from './api-key-record';

/** Where API key records live: this process (memory), Redis or PostgreSQL, shared by every instance on it. */
export interface KeyStore {
  /** Adds a record; its id and hash are new (random). */
  create(record: ApiKeyRecord): Promise<void>;
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  get(id: string): Promise<ApiKeyRecord | undefined>;
  /** Every key, or one tenant's, oldest first. */
  list(filter?: { tenant?: string }): Promise<ApiKeyRecord[]>;
  /** Replaces the mutable settings (a revocation is never undone by it); undefined when no such key. */
  update(id: string, settings: MutableKeySettings): Promise<ApiKeyRecord | undefined>;
  /** Marks the key revoked at `at` unless it already was; undefined when no such key. */
  revoke(id: string, at: string): Promise<ApiKeyRecord | undefined>;
  close(): Promise<void>;
}

export type KeyStoreSettings =
  | { kind: 'memory' }
  | { kind: 'redis'; url: string; keyPrefix: string }
  | { kind: 'postgres'; url: string; table: string };

export const DEFAULT_KEYS_REDIS_PREFIX = 'tollgate:keys:';
export const DEFAULT_KEYS_TABLE = 'tollgate_api_keys';

const MUTABLE_FIELDS: ReadonlyArray<keyof MutableKeySettings> = ['name', 'models', 'budget', 'rpm', 'tpm', 'expiresAt'];

/** The record with its mutable settings replaced by `settings` (absent ones cleared). */
export function withSettings(record: ApiKeyRecord, settings: MutableKeySettings): ApiKeyRecord {
  const next: Record<string, unknown> = { ...record };
  for (const field of MUTABLE_FIELDS) {
    if (settings[field] === undefined) delete next[field];
    else next[field] = settings[field];
  }
  return next as unknown as ApiKeyRecord;
}

export function mutableSettingsOf(record: ApiKeyRecord): MutableKeySettings {
  const settings: Record<string, unknown> = {};
  for (const field of MUTABLE_FIELDS) if (record[field] !== undefined) settings[field] = record[field];
  return settings as MutableKeySettings;
}
