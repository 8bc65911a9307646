/**
 * Stored responses of the Responses API (`store`, default true as OpenAI): a response and the conversation
 * it ends, so `previous_response_id` continues it and `GET /responses/{id}` shows it. Each belongs to the
 * tenant of the caller that made it; another tenant's id reads as one that does not exist.
 */
import type { ResponseItem } from './responses-input';
import type { StoredResponseBody } from './responses-bodies';

export interface StoredResponse {
  /** The tenant of the caller that made it (`''` for a caller without a tenant). */
  owner: string;
  body: StoredResponseBody;
  /** This request's input items, for `GET /responses/{id}/input_items`. */
  input: ResponseItem[];
  /** The whole conversation up to and including this response's output: what a continuation starts from. */
  conversation: ResponseItem[];
}

export interface ResponseStore {
  save(stored: StoredResponse): Promise<void>;
  /** Undefined when missing, expired or another owner's. */
  get(owner: string, id: string): Promise<StoredResponse | undefined>;
  /** An item of one of this owner's stored responses (input or output), for an `item_reference`. */
  item(owner: string, itemId: string): Promise<ResponseItem | undefined>;
  /** False when there was nothing of this owner's to delete. */
  delete(owner: string, id: string): Promise<boolean>;
}

export const RESPONSE_STORE = Symbol('RESPONSE_STORE');

/** The ids of a response's input and output items, which `item_reference` names; an item without one (Codex's reasoning) has none to name. */
export function storedItemIds(stored: StoredResponse): string[] {
  const ids: string[] = [];
  for (const item of [...stored.input, ...stored.body.output]) if (typeof item.id === 'string') ids.push(item.id);
  return ids;
}

export interface ResponseStoreBounds {
  /** How long a response stays retrievable (milliseconds). */
  retentionMs: number;
  /**
   * Responses kept at most (in memory and PostgreSQL: in all; in Redis: per owner). Over it the oldest of the
   * owner holding the most go first, so no tenant's saves bring another below an equal share (decision D11).
   */
  maxStored: number;
}

/**
 * In this process's memory, bounded in time and count: a continuation must reach the process that kept the
 * response (the Redis and PostgreSQL stores are shared by every process on them).
 */
export class MemoryResponseStore implements ResponseStore {
  /** Insertion order is age order: the first entries are the oldest. */
  private readonly entries = new Map<string, { stored: StoredResponse; expiresAt: number }>();
  /** Owner -> its responses' ids, oldest first: whom the count bound takes from. */
  private readonly idsByOwner = new Map<string, Set<string>>();
  /** Owner and item id ({@link itemKey}) -> the owner's response holding it. */
  private readonly itemOwners = new Map<string, string>();

  constructor(
    private readonly bounds: ResponseStoreBounds,
    private readonly now: () => number = Date.now,
  ) {}

  async save(stored: StoredResponse): Promise<void> {
    this.evictExpired();
    this.forget(stored.body.id);
    this.entries.set(stored.body.id, { stored, expiresAt: this.now() + this.bounds.retentionMs });
    const ownIds = this.idsByOwner.get(stored.owner) ?? new Set<string>();
    this.idsByOwner.set(stored.owner, ownIds.add(stored.body.id));
    // Keyed by owner: item ids are the caller's to choose, and another tenant's same id must not take the pointer over.
    for (const itemId of storedItemIds(stored)) this.itemOwners.set(itemKey(stored.owner, itemId), stored.body.id);
    while (this.entries.size > this.bounds.maxStored) this.forget(this.oldestOfLargestOwner());
  }

  async item(owner: string, itemId: string): Promise<ResponseItem | undefined> {
    const responseId = this.itemOwners.get(itemKey(owner, itemId));
    const stored = responseId === undefined ? undefined : await this.get(owner, responseId);
    return stored && [...stored.input, ...stored.body.output].find((item) => item.id === itemId);
  }

  async get(owner: string, id: string): Promise<StoredResponse | undefined> {
    const entry = this.entries.get(id);
    if (!entry || entry.stored.owner !== owner) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.forget(id);
      return undefined;
    }
    return entry.stored;
  }

  async delete(owner: string, id: string): Promise<boolean> {
    if (!(await this.get(owner, id))) return false;
    this.forget(id);
    return true;
  }

  private evictExpired(): void {
    const now = this.now();
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now) break;
      this.forget(id);
    }
  }

  /** The count bound takes from the owner holding the most (between equals, the older), so one tenant's saves evict its own first. */
  private oldestOfLargestOwner(): string {
    let chosen = '';
    let chosenSize = 0;
    for (const ids of this.idsByOwner.values()) {
      const oldest = ids.values().next().value as string;
      const older = ids.size === chosenSize && this.entries.get(oldest)!.expiresAt < this.entries.get(chosen)!.expiresAt;
      if (ids.size > chosenSize || older) [chosen, chosenSize] = [oldest, ids.size];
    }
    return chosen;
  }

  private forget(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    const ownIds = this.idsByOwner.get(entry.stored.owner);
    ownIds?.delete(id);
    if (ownIds?.size === 0) this.idsByOwner.delete(entry.stored.owner);
    for (const itemId of storedItemIds(entry.stored)) {
      const key = itemKey(entry.stored.owner, itemId);
      if (this.itemOwners.get(key) === id) this.itemOwners.delete(key);
    }
  }
}

/** One owner's item: the owner URI-encoded, so it holds no `:` and no two pairs share a key. */
function itemKey(owner: string, itemId: string): string {
  return `${encodeURIComponent(owner)}:${itemId}`;
}
