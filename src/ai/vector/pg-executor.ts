import type { SqlExecutor } from './sql-executor';

/** A small pool on a PostgreSQL server; the vector store issues one statement at a time. */
export function createPgExecutor(url: string): SqlExecutor {
  // Required here: a configuration without a PostgreSQL vector store loads no PostgreSQL client (decision C13).
  const { Pool } = require('pg') as typeof import('pg');
  const pool = new Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000 });
  // An idle client that loses its connection must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  return {
    query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await pool.query(sql, params)).rows as T[] }),
    close: () => pool.end(),
  };
}
