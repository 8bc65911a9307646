import type { Pool } from 'pg';
import type { ApiKeyRecord, MutableKeySettings } from './api-key-record';
import { type KeyStore, mutableSettingsOf, withSettings } from './key-store';

/** Unquoted identifiers only: the name is interpolated into SQL. */
export const KEYS_TABLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

interface KeyRow {
  base: ApiKeyRecord;
  settings: MutableKeySettings;
  revoked_at: string | null;
}

/**
 * Keys in one PostgreSQL table (created when missing): the fixed part, the mutable settings and the
 * revocation time in separate columns, so an update never undoes a concurrent revocation.
 */
export class PostgresKeyStore implements KeyStore {
  private readonly pool: Pool;
  private ready?: Promise<void>;

  constructor(url: string, private readonly table: string) {
    if (!KEYS_TABLE_PATTERN.test(table)) throw new Error(`invalid table name ${JSON.stringify(table)}`);
    // Required here: a configuration without PostgreSQL loads no PostgreSQL client (decision C13).
    const { Pool: PgPool } = require('pg') as typeof import('pg');
    this.pool = new PgPool({ connectionString: url, max: 5, connectionTimeoutMillis: 2000, idleTimeoutMillis: 30_000 });
    // An idle client that loses its connection must not crash the process; the next query reports it.
    this.pool.on('error', () => undefined);
  }

  async create(record: ApiKeyRecord): Promise<void> {
    await this.ensureTable();
    const settings = mutableSettingsOf(record);
    const base: Record<string, unknown> = { ...record };
    for (const field of [...Object.keys(settings), 'revokedAt']) delete base[field];
    await this.pool.query(
      `INSERT INTO ${this.table} (id, hash, tenant, created_at, base, settings, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [record.id, record.hash, record.tenant, record.createdAt, JSON.stringify(base), JSON.stringify(settings), record.revokedAt ?? null],
    );
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.one(`WHERE hash = $1`, [hash]);
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    return this.one(`WHERE id = $1`, [id]);
  }

  async list(filter: { tenant?: string } = {}): Promise<ApiKeyRecord[]> {
    await this.ensureTable();
    const where = filter.tenant === undefined ? '' : 'WHERE tenant = $1';
    const result = await this.pool.query<KeyRow>(`SELECT base, settings, revoked_at FROM ${this.table} ${where} ORDER BY created_at, id`, filter.tenant === undefined ? [] : [filter.tenant]);
    return result.rows.map(toRecord);
  }

  async update(id: string, settings: MutableKeySettings): Promise<ApiKeyRecord | undefined> {
    await this.ensureTable();
    const result = await this.pool.query<KeyRow>(`UPDATE ${this.table} SET settings = $2 WHERE id = $1 RETURNING base, settings, revoked_at`, [id, JSON.stringify(settings)]);
    return result.rows[0] && toRecord(result.rows[0]);
  }

  async revoke(id: string, at: string): Promise<ApiKeyRecord | undefined> {
    await this.ensureTable();
    const result = await this.pool.query<KeyRow>(
      `UPDATE ${this.table} SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING base, settings, revoked_at`,
      [id, at],
    );
    return result.rows[0] && toRecord(result.rows[0]);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async one(where: string, params: unknown[]): Promise<ApiKeyRecord | undefined> {
    await this.ensureTable();
    const result = await this.pool.query<KeyRow>(`SELECT base, settings, revoked_at FROM ${this.table} ${where}`, params);
    return result.rows[0] && toRecord(result.rows[0]);
  }

  /** Retried on the next call after a failure (the database may come up later than the server). */
  private ensureTable(): Promise<void> {
    this.ready ??= this.pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (
          id text PRIMARY KEY, hash text NOT NULL UNIQUE, tenant text NOT NULL, created_at text NOT NULL,
          base jsonb NOT NULL, settings jsonb NOT NULL, revoked_at text)`,
      )
      .then(() => undefined)
      .catch((error: unknown) => {
        this.ready = undefined;
        throw error;
      });
    return this.ready;
  }
}

function toRecord(row: KeyRow): ApiKeyRecord {
  const record = withSettings(row.base, row.settings);
  if (row.revoked_at !== null) record.revokedAt = row.revoked_at;
  return record;
}
