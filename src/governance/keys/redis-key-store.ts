import type Redis from 'ioredis';
import type { ApiKeyRecord, MutableKeySettings } from './api-key-record';
import { type KeyStore, mutableSettingsOf, withSettings } from './key-store';

/** Sets a field of an existing hash only: an update or revocation of a key that is gone creates nothing. */
const SET_IF_EXISTS = `if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[3] == 'nx' then redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1`;

/**
 * Keys in Redis, shared by every instance on it. Per key a hash `<prefix>id:<id>` with the fixed part
 * (`base`), the mutable settings (`settings`) and `revoked_at` in separate fields, so that an update can
 * never undo a concurrent revocation; `<prefix>hash:<sha256>` points at the id; `<prefix>ids` orders ids by
 * creation time. Commands do not queue while Redis is down: the caller sees the failure at once.
 */
export class RedisKeyStore implements KeyStore {
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix: string) {
    // Required here: a configuration without Redis loads no Redis client (decision C13).
    const { default: RedisClient } = require('ioredis') as typeof import('ioredis');
    this.redis = new RedisClient(url, {
      enableOfflineQueue: true,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
      disconnectTimeout: 200,
    });
    // Failures surface on the calls that meet them; a background reconnect must not crash the process.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('tollgateSetIfExists', { numberOfKeys: 1, lua: SET_IF_EXISTS });
  }

  async create(record: ApiKeyRecord): Promise<void> {
    const { revokedAt: _revoked, ...rest } = record;
    const base = { ...rest };
    const settings = mutableSettingsOf(record);
    for (const field of Object.keys(settings)) delete (base as Record<string, unknown>)[field];
    await this.redis
      .multi()
      .hset(this.idKey(record.id), 'base', JSON.stringify(base), 'settings', JSON.stringify(settings))
      .set(this.hashKey(record.hash), record.id)
      .zadd(this.idsKey(), Date.parse(record.createdAt), record.id)
      .exec();
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const id = await this.redis.get(this.hashKey(hash));
    return id === null ? undefined : this.get(id);
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    return toRecord(await this.redis.hgetall(this.idKey(id)));
  }

  async list(filter: { tenant?: string } = {}): Promise<ApiKeyRecord[]> {
    const ids = await this.redis.zrange(this.idsKey(), 0, -1);
    if (!ids.length) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.idKey(id));
    const results = (await pipeline.exec()) ?? [];
    return results
      .map(([error, fields]) => (error ? undefined : toRecord(fields as Record<string, string>)))
      .filter((record): record is ApiKeyRecord => record !== undefined && (filter.tenant === undefined || record.tenant === filter.tenant));
  }

  async update(id: string, settings: MutableKeySettings): Promise<ApiKeyRecord | undefined> {
    const updated = await this.setIfExists(id, 'settings', JSON.stringify(settings), 'set');
    return updated ? this.get(id) : undefined;
  }

  async revoke(id: string, at: string): Promise<ApiKeyRecord | undefined> {
    const found = await this.setIfExists(id, 'revoked_at', at, 'nx');
    return found ? this.get(id) : undefined;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private async setIfExists(id: string, field: string, value: string, mode: 'set' | 'nx'): Promise<boolean> {
    const run = (this.redis as unknown as Record<string, (...args: string[]) => Promise<number>>).tollgateSetIfExists;
    return (await run.call(this.redis, this.idKey(id), field, value, mode)) === 1;
  }

  private idKey(id: string): string {
    return `${this.prefix}id:${id}`;
  }

  private hashKey(hash: string): string {
    return `${this.prefix}hash:${hash}`;
  }

  private idsKey(): string {
    return `${this.prefix}ids`;
  }
}

/** A hash another writer corrupted counts as no key (401 / 404), never as a different one. */
function toRecord(fields: Record<string, string>): ApiKeyRecord | undefined {
  if (!fields.base) return undefined;
  try {
    const base = JSON.parse(fields.base) as ApiKeyRecord;
    const settings = JSON.parse(fields.settings ?? '{}') as MutableKeySettings;
    const record = withSettings(base, settings);
    if (fields.revoked_at) record.revokedAt = fields.revoked_at;
    return typeof record.id === 'string' && typeof record.hash === 'string' && typeof record.tenant === 'string' ? record : undefined;
  } catch {
    return undefined;
  }
}
