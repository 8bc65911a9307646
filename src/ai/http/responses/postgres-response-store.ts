import { Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Pool } from 'pg';
import { POSTGRES_SUFFIXED_TABLE_PATTERN, tablesCreatedOnce } from '../../../auth/stores/postgres-table';
import type { ResponseItem } from './responses-input';
import { type ResponseStore, type ResponseStoreBounds, type StoredResponse, storedItemIds } from './responses-store';

/** How often at most one process deletes what has expired or is over the count bound. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Stored responses in PostgreSQL, shared by every process on it, so a conversation one process started another
 * can continue. `<table>` holds each response (its JSON, owner and expiry, in the database's clock so every
 * process agrees); `<table>_items` maps an owner's item id to the response holding it and goes with that response
 * (ON DELETE CASCADE). Reads skip what has expired; a save deletes it, and the responses over `maxStored`
 * (the oldest of whoever holds the most), at most once a minute per process.
 */
export class PostgresResponseStore implements ResponseStore, OnModuleDestroy {
  private readonly logger = new Logger('ResponseStore');
  private readonly pool: Pool;
  private readonly items: string;
  private readonly ensureTables: () => Promise<void>;
  private nextSweep = 0;

  constructor(
    url: string,
    private readonly table: string,
    private readonly bounds: ResponseStoreBounds,
    private readonly now: () => number = Date.now,
  ) {
    if (!POSTGRES_SUFFIXED_TABLE_PATTERN.test(table)) throw new Error(`invalid responses table name ${JSON.stringify(table)}`);
    this.items = `${table}_items`;
    // Required here: a configuration without this store loads no PostgreSQL client (decision C13).
    const { Pool: PgPool } = require('pg') as typeof import('pg');
    this.pool = new PgPool({ connectionString: url, max: 4, connectionTimeoutMillis: 2000, idleTimeoutMillis: 30_000 });
    // An idle client that loses its connection must not crash the process; the next query reports it.
    this.pool.on('error', () => undefined);
    this.ensureTables = tablesCreatedOnce(this.pool, table, [
      `CREATE TABLE IF NOT EXISTS ${table} (
         id text PRIMARY KEY, owner text NOT NULL, stored json NOT NULL,
         created_at timestamptz NOT NULL DEFAULT clock_timestamp(), expires_at timestamptz NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS ${table}_expires_idx ON ${table} (expires_at)`,
      `CREATE INDEX IF NOT EXISTS ${table}_created_idx ON ${table} (created_at)`,
      `CREATE TABLE IF NOT EXISTS ${this.items} (
         owner text NOT NULL, item_id text NOT NULL, response_id text NOT NULL REFERENCES ${table} (id) ON DELETE CASCADE,
         PRIMARY KEY (owner, item_id))`,
      `CREATE INDEX IF NOT EXISTS ${this.items}_response_idx ON ${this.items} (response_id)`,
    ]);
  }

  /** One statement: the response and its item pointers are stored together or not at all. */
  async save(stored: StoredResponse): Promise<void> {
    await this.ensureTables();
    // An item id a client sends again (a previous output passed back as input) points to the newest response of
    // its owner: ids are the caller's to choose, so another owner's same id must not take the pointer over.
    const itemIds = [...new Set(storedItemIds(stored))];
    await this.pool.query(
      `WITH saved AS (
         INSERT INTO ${this.table} (id, owner, stored, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
         ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, stored = EXCLUDED.stored, expires_at = EXCLUDED.expires_at
         RETURNING id
       )
       INSERT INTO ${this.items} (owner, item_id, response_id) SELECT $2, unnest($5::text[]), id FROM saved
       ON CONFLICT (owner, item_id) DO UPDATE SET response_id = EXCLUDED.response_id`,
      [stored.body.id, stored.owner, JSON.stringify(stored), this.bounds.retentionMs, itemIds],
    );
    if (this.now() >= this.nextSweep) {
      this.nextSweep = this.now() + SWEEP_INTERVAL_MS;
      this.sweep().catch((error: unknown) => this.logger.warn(`could not delete expired responses: ${messageOf(error)}`));
    }
  }

  async get(owner: string, id: string): Promise<StoredResponse | undefined> {
    await this.ensureTables();
    const result = await this.pool.query<{ stored: StoredResponse }>(
      `SELECT stored FROM ${this.table} WHERE id = $1 AND owner = $2 AND expires_at > now()`,
      [id, owner],
    );
    return result.rows[0]?.stored;
  }

  async item(owner: string, itemId: string): Promise<ResponseItem | undefined> {
    await this.ensureTables();
    const result = await this.pool.query<{ stored: StoredResponse }>(
      `SELECT r.stored FROM ${this.items} i JOIN ${this.table} r ON r.id = i.response_id
        WHERE i.owner = $2 AND i.item_id = $1 AND r.owner = $2 AND r.expires_at > now()`,
      [itemId, owner],
    );
    const stored = result.rows[0]?.stored;
    return stored && [...stored.input, ...stored.body.output].find((item) => item.id === itemId);
  }

  async delete(owner: string, id: string): Promise<boolean> {
    await this.ensureTables();
    const result = await this.pool.query(`DELETE FROM ${this.table} WHERE id = $1 AND owner = $2 AND expires_at > now()`, [id, owner]);
    return result.rowCount === 1;
  }

  /**
   * Deletes the expired responses and those beyond `maxStored` (their items go with them); returns how many. The
   * excess is taken deepest-first from each owner's newest-first ranking: the oldest of whoever holds the most,
   * so one tenant's saves never bring another below an equal share (decision D11).
   */
  async sweep(): Promise<number> {
    await this.ensureTables();
    const result = await this.pool.query(
      `WITH live AS (
         SELECT id, created_at, row_number() OVER (PARTITION BY owner ORDER BY created_at DESC, id DESC) AS depth
           FROM ${this.table} WHERE expires_at > now()
       )
       DELETE FROM ${this.table} WHERE expires_at <= now()
          OR id IN (SELECT id FROM live ORDER BY depth DESC, created_at, id
                     LIMIT greatest((SELECT count(*) FROM live) - $1, 0))`,
      [this.bounds.maxStored],
    );
    return result.rowCount ?? 0;
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.end();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
