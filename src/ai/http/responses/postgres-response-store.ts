import { Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import type { ResponseItem } from './responses-input';
import { type ResponseStore, type ResponseStoreBounds, type StoredResponse, storedItemIds } from './responses-store';

/** Unquoted identifiers only (interpolated into SQL), short enough for the `_items` suffix. */
export const RESPONSES_TABLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,56}$/;

/** How often at most one process deletes what has expired or is over the count bound. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Stored responses in PostgreSQL, shared by every process on it, so a conversation one process started another
 * can continue. `<table>` holds each response (its JSON, owner and expiry, in the database's clock so every
 * process agrees); `<table>_items` maps an item id to the response holding it and goes with that response
 * (ON DELETE CASCADE). Reads skip what has expired; a save deletes it, and the oldest responses over
 * `maxStored`, at most once a minute per process.
 */
export class PostgresResponseStore implements ResponseStore, OnModuleDestroy {
  private readonly logger = new Logger('ResponseStore');
  private readonly pool: Pool;
  private readonly items: string;
  private ready?: Promise<void>;
  private nextSweep = 0;

  constructor(
    url: string,
    private readonly table: string,
    private readonly bounds: ResponseStoreBounds,
    private readonly now: () => number = Date.now,
  ) {
    if (!RESPONSES_TABLE_PATTERN.test(table)) throw new Error(`invalid responses table name ${JSON.stringify(table)}`);
    this.items = `${table}_items`;
    // Required here: a configuration without this store loads no PostgreSQL client (decision C13).
    const { Pool: PgPool } = require('pg') as typeof import('pg');
    this.pool = new PgPool({ connectionString: url, max: 4, connectionTimeoutMillis: 2000, idleTimeoutMillis: 30_000 });
    // An idle client that loses its connection must not crash the process; the next query reports it.
    this.pool.on('error', () => undefined);
  }

  /** One statement: the response and its item pointers are stored together or not at all. */
  async save(stored: StoredResponse): Promise<void> {
    await this.ensureTables();
    // An item id a client sends again (a previous output passed back as input) points to the newest response.
    const itemIds = [...new Set(storedItemIds(stored))];
    await this.pool.query(
      `WITH saved AS (
         INSERT INTO ${this.table} (id, owner, stored, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
         ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, stored = EXCLUDED.stored, expires_at = EXCLUDED.expires_at
         RETURNING id
       )
       INSERT INTO ${this.items} (item_id, response_id) SELECT unnest($5::text[]), id FROM saved
       ON CONFLICT (item_id) DO UPDATE SET response_id = EXCLUDED.response_id`,
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
        WHERE i.item_id = $1 AND r.owner = $2 AND r.expires_at > now()`,
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

  /** Deletes the expired responses and the oldest beyond `maxStored` (their items go with them); returns how many. */
  async sweep(): Promise<number> {
    await this.ensureTables();
    const result = await this.pool.query(
      `DELETE FROM ${this.table} WHERE expires_at <= now()
          OR id IN (SELECT id FROM ${this.table} ORDER BY created_at DESC, id DESC OFFSET $1)`,
      [this.bounds.maxStored],
    );
    return result.rowCount ?? 0;
  }

  async onModuleDestroy(): Promise<void> {
    await this.pool.end();
  }

  /** Retried on the next call after a failure (the database may come up later than the server). */
  private ensureTables(): Promise<void> {
    this.ready ??= this.createTables().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /** Under an advisory lock: concurrent CREATE TABLE IF NOT EXISTS from two processes can still collide. */
  private async createTables(): Promise<void> {
    const client: PoolClient = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.table]);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${this.table} (
          id text PRIMARY KEY, owner text NOT NULL, stored json NOT NULL,
          created_at timestamptz NOT NULL DEFAULT clock_timestamp(), expires_at timestamptz NOT NULL)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${this.table}_expires_idx ON ${this.table} (expires_at)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${this.table}_created_idx ON ${this.table} (created_at)`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${this.items} (
          item_id text PRIMARY KEY, response_id text NOT NULL REFERENCES ${this.table} (id) ON DELETE CASCADE)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${this.items}_response_idx ON ${this.items} (response_id)`);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
