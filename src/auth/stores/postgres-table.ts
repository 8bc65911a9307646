import type { Pool } from 'pg';

/** Default table of the database-backed store. */
export const DEFAULT_POSTGRES_TABLE = 'tollgate_cache';

/** Unquoted identifiers only: the name is interpolated into SQL. */
export const POSTGRES_TABLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * The same, short enough (44 characters) for every name derived from it to fit PostgreSQL's 63: the longest is
 * `<table>_items_response_idx`. A longer one would be truncated, and a truncated index name can equal another
 * relation's, which CREATE INDEX IF NOT EXISTS then silently skips.
 */
export const POSTGRES_SUFFIXED_TABLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,43}$/;

/**
 * What a store awaits before each query: `statements` (CREATE … IF NOT EXISTS) run once per pool, in one
 * transaction under an advisory lock named `lockName`, since concurrent CREATE TABLE IF NOT EXISTS from two
 * processes can still collide. After a failure the next call tries again: the database may come up later than
 * the server.
 */
export function tablesCreatedOnce(pool: Pool, lockName: string, statements: readonly string[]): () => Promise<void> {
  let ready: Promise<void> | undefined;
  return () => {
    ready ??= createTablesUnderLock(pool, lockName, statements).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
}

async function createTablesUnderLock(pool: Pool, lockName: string, statements: readonly string[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockName]);
    for (const statement of statements) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
