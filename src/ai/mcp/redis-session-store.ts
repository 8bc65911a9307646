import { createClient } from '@keyv/redis';
import type { McpSession, McpSessionStore } from './mcp-session-store.interface';

type RedisClient = ReturnType<typeof createClient>;

/**
 * Sessions in Redis, shared by every instance pointing at it: one key per session (`<prefix><id>`), a JSON
 * value, and the idle TTL as the key's expiry (PX), restarted on each use.
 */
export class RedisSessionStore implements McpSessionStore {
  private readonly client: RedisClient;
  private connecting?: Promise<unknown>;

  constructor(url: string, private readonly keyPrefix: string) {
    // Bounded: a few reconnect attempts, then the client closes and the next call connects again; commands
    // never wait in an offline queue. A request therefore fails fast (503) while Redis is down.
    this.client = createClient({
      url,
      disableOfflineQueue: true,
      socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => (retries >= 2 ? new Error('Redis is unreachable') : 100 * (retries + 1)) },
    });
    // Failures surface on the calls that hit them; an idle reconnect must not crash the process.
    this.client.on('error', () => undefined);
  }

  async create(session: McpSession, ttlMs: number): Promise<void> {
    await this.ready();
    await this.client.set(this.key(session.id), JSON.stringify(session), { PX: ttlMs });
  }

  async touch(id: string, ttlMs: number): Promise<McpSession | undefined> {
    await this.ready();
    const value = await this.client.getEx(this.key(id), { PX: ttlMs });
    if (value === null) return undefined;
    return parseSession(String(value));
  }

  async delete(id: string): Promise<boolean> {
    await this.ready();
    return (await this.client.del(this.key(id))) > 0;
  }

  async close(): Promise<void> {
    if (this.client.isOpen) await this.client.quit();
  }

  private ready(): Promise<unknown> {
    if (this.connecting) return this.connecting;
    // Open but not ready means reconnecting: commands then fail fast instead of queueing.
    if (this.client.isOpen) return Promise.resolve();
    this.connecting = this.client.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private key(id: string): string {
    return `${this.keyPrefix}${id}`;
  }
}

/** A value another writer corrupted counts as no session (404), never as someone else's. */
function parseSession(text: string): McpSession | undefined {
  try {
    const value = JSON.parse(text) as McpSession;
    return typeof value.id === 'string' && typeof value.principal === 'string' && typeof value.protocolVersion === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
