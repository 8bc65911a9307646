import { Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { failFastRedis } from '../../../common/fail-fast-redis';
import type { ResponseItem } from './responses-input';
import { type ResponseStore, type ResponseStoreBounds, type StoredResponse, storedItemIds } from './responses-store';

/**
 * Stored responses in Redis, shared by every process on it, so a conversation one process started another can
 * continue. Per response `<prefix>resp:<id>` (its JSON), per item `<prefix>item:<owner>:<item id>` (the owner's
 * response holding it) and per owner `<prefix>owner:<owner>` (its responses' ids scored by save time; the owner
 * URI-encoded, so it holds no `:`), each expiring after the retention. Each owner keeps at most `maxStored`, its
 * own oldest going first, so no tenant fills Redis until its memory policy evicts another's (decision D11).
 * Commands fail at once while Redis is down (a create still answers; only the continuation is lost).
 */
export class RedisResponseStore implements ResponseStore, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ResponseStore');
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly bounds: ResponseStoreBounds,
    private readonly now: () => number = Date.now,
  ) {
    this.redis = failFastRedis(url);
  }

  async save(stored: StoredResponse): Promise<void> {
    const id = stored.body.id;
    const { retentionMs, maxStored } = this.bounds;
    const ownerKey = this.ownerKey(stored.owner);
    const now = this.now();
    const multi = this.redis.multi().set(this.responseKey(id), JSON.stringify(stored), 'PX', retentionMs);
    // Keyed by owner: item ids are the caller's to choose, and another tenant's same id must not take the pointer over.
    for (const itemId of storedItemIds(stored)) multi.set(this.itemKey(stored.owner, itemId), id, 'PX', retentionMs);
    multi.zadd(ownerKey, now, id).zremrangebyscore(ownerKey, '-inf', now - retentionMs).pexpire(ownerKey, retentionMs).zcard(ownerKey);
    const results = await multi.exec();
    const held = Number(results?.at(-1)?.[1] ?? 0);
    if (held <= maxStored) return;
    // ZPOPMIN is atomic: two processes saving at once never both take the same response, nor too many.
    const popped = (await this.redis.zpopmin(ownerKey, held - maxStored)).filter((_, index) => index % 2 === 0);
    if (popped.length > 0) await this.redis.del(...popped.map((oldId) => this.responseKey(oldId)));
  }

  async get(owner: string, id: string): Promise<StoredResponse | undefined> {
    const json = await this.redis.get(this.responseKey(id));
    const stored = json === null ? undefined : (JSON.parse(json) as StoredResponse);
    return stored?.owner === owner ? stored : undefined;
  }

  async item(owner: string, itemId: string): Promise<ResponseItem | undefined> {
    const responseId = await this.redis.get(this.itemKey(owner, itemId));
    const stored = responseId === null ? undefined : await this.get(owner, responseId);
    return stored && [...stored.input, ...stored.body.output].find((item) => item.id === itemId);
  }

  /** The item pointers are left to expire: they lead nowhere once the response is gone. */
  async delete(owner: string, id: string): Promise<boolean> {
    if (!(await this.get(owner, id))) return false;
    const results = await this.redis.multi().del(this.responseKey(id)).zrem(this.ownerKey(owner), id).exec();
    return results?.[0]?.[1] === 1;
  }

  /** Connects before the server listens; an unreachable Redis is logged, and the client keeps reconnecting. */
  async onModuleInit(): Promise<void> {
    await this.redis.connect().catch((error: unknown) => {
      this.logger.error(`Redis unreachable for stored responses: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }

  private responseKey(id: string): string {
    return `${this.prefix}resp:${id}`;
  }

  private ownerKey(owner: string): string {
    return `${this.prefix}owner:${encodeURIComponent(owner)}`;
  }

  private itemKey(owner: string, id: string): string {
    return `${this.prefix}item:${encodeURIComponent(owner)}:${id}`;
  }
}
