/** Default table of the database-backed store. */
export const DEFAULT_POSTGRES_TABLE = 'tollgate_cache';

/** Unquoted identifiers only: the name is interpolated into SQL. */
export const POSTGRES_TABLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
