import type { McpSession, McpSessionStore } from './mcp-session-store.interface';

/** Sessions of one process. Expired entries are dropped when read, and swept once a minute at most. */
export class MemorySessionStore implements McpSessionStore {
  private readonly sessions = new Map<string, { session: McpSession; expiresAt: number }>();
  private lastSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async create(session: McpSession, ttlMs: number): Promise<void> {
    this.sweep();
    this.sessions.set(session.id, { session: { ...session }, expiresAt: this.now() + ttlMs });
  }

  async touch(id: string, ttlMs: number): Promise<McpSession | undefined> {
    const entry = this.sessions.get(id);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    entry.expiresAt = this.now() + ttlMs;
    return { ...entry.session };
  }

  async delete(id: string): Promise<boolean> {
    const entry = this.sessions.get(id);
    this.sessions.delete(id);
    return entry !== undefined && entry.expiresAt > this.now();
  }

  async close(): Promise<void> {
    this.sessions.clear();
  }

  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, entry] of this.sessions) if (entry.expiresAt <= now) this.sessions.delete(id);
  }
}
