import { EventEmitter } from 'node:events';
import type { KeyvStoreAdapter, StoredData } from 'keyv';
import { Pool } from 'pg';
import { DEFAULT_POSTGRES_TABLE, POSTGRES_TABLE_PATTERN } from './postgres-table';

export interface PostgresStoreOptions {
  url: string;
  table?: string;
  connectionTimeoutMs?: number;
  sweepIntervalMs?: number;
}

/**
 * Keyv store on PostgreSQL: one row per key `<namespace>:<key>`, with a real `expires_at` column that
 * reads honour and a timer sweeps. Written instead of @keyv/postgres because that adapter keeps one
 * module-global pool (closing one store ends another's pool), leaves pool errors unhandled (an idle
 * client's error crashes the process) and never deletes expired rows it is not asked for again.
 */
export class PostgresStore extends EventEmitter implements KeyvStoreAdapter {
  readonly opts: { dialect: 'postgres'; table: string };
  namespace?: string;
  private readonly pool: Pool;
  private readonly table: string;
  private ready?: Promise<void>;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: PostgresStoreOptions) {
    super();
    this.table = options.table ?? DEFAULT_POSTGRES_TABLE;
    if (!POSTGRES_TABLE_PATTERN.test(this.table)) throw new Error(`invalid table name ${JSON.stringify(this.table)}`);
    this.opts = { dialect: 'postgres', table: this.table };
    this.pool = new Pool({
      connectionString: options.url,
      max: 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 2000,
      idleTimeoutMillis: 30_000,
    });
    this.pool.on('error', (error) => this.emit('error', error));
    this.sweeper = setInterval(() => void this.sweep(), options.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  async get<Value>(key: string): Promise<StoredData<Value> | undefined> {
    await this.ensureTable();
    const result = await this.pool.query<{ value: string }>(
      `SELECT value FROM ${this.table} WHERE key = $1 AND (expires_at IS NULL OR expires_at > $2)`,
      [this.prefixed(key), Date.now()],
    );
    return result.rows[0]?.value as StoredData<Value> | undefined;
  }

  async set(key: string, value: string, ttl?: number): Promise<boolean> {
    await this.ensureTable();
    await this.pool.query(
      `INSERT INTO ${this.table} (key, value, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
      [this.prefixed(key), value, ttl && ttl > 0 ? Date.now() + ttl : null],
    );
    return true;
  }

  async delete(key: string): Promise<boolean> {
    await this.ensureTable();
    const result = await this.pool.query(`DELETE FROM ${this.table} WHERE key = $1`, [this.prefixed(key)]);
    return (result.rowCount ?? 0) > 0;
  }

  async has(key: string): Promise<boolean> {
    return (await this.get(key)) !== undefined;
  }

  /** Deletes this namespace's rows only (LIKE wildcards in the namespace escaped). */
  async clear(): Promise<void> {
    await this.ensureTable();
    const prefix = this.namespace ? `${this.namespace.replace(/[\\%_]/g, '\\$&')}:%` : '%';
    await this.pool.query(`DELETE FROM ${this.table} WHERE key LIKE $1 ESCAPE '\\'`, [prefix]);
  }

  async disconnect(): Promise<void> {
    clearInterval(this.sweeper);
    await this.pool.end();
  }

  private prefixed(key: string): string {
    return this.namespace ? `${this.namespace}:${key}` : key;
  }

  private ensureTable(): Promise<void> {
    this.ready ??= this.pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at BIGINT)`,
      )
      .then(
        () => undefined,
        (error: { code?: string }) => {
          // Two processes creating the table at once: the loser sees a duplicate; the table exists.
          if (error.code === '23505' || error.code === '42P07') return;
          this.ready = undefined;
          throw error;
        },
      );
    return this.ready;
  }

  private async sweep(): Promise<void> {
    if (!this.ready) return;
    try {
      await this.ready;
      await this.pool.query(`DELETE FROM ${this.table} WHERE expires_at IS NOT NULL AND expires_at <= $1`, [
        Date.now(),
      ]);
    } catch (error) {
      this.emit('error', error);
    }
  }
}
