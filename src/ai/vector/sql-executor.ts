/** The little of a SQL client the vector store needs; `pg` and PGlite both fit behind it. */
export interface SqlExecutor {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  close(): Promise<void>;
}

/** SQLSTATE of a driver error, when it has one (both `pg` and PGlite set `code`). */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A Node network error code (ECONNREFUSED, ...), when the failure was the connection. */
export function networkCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9_]{2,40}$/.test(code) ? code : undefined;
}
