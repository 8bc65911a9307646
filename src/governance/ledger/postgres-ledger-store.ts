/**
 * The durable ledger on PostgreSQL: one row per call in `<table>`, and whole UTC days older than the
 * retention folded into `<table>_daily` (one row per day, tenant, sub-tenant, subject, key, provider and
 * model) so the table does not grow without bound. Reports read both.
 */
import type { Pool } from 'pg';
import { POSTGRES_SUFFIXED_TABLE_PATTERN, tablesCreatedOnce } from '../../auth/stores/postgres-table';
import type { LedgerEntry } from './ledger-entry';
import type { LedgerStore } from './ledger-store';
import { emptyRow, sortRows, type UsageGroup, type UsageQuery, type UsageRow } from './usage-query';

export const DEFAULT_LEDGER_TABLE = 'tollgate_ledger';

export interface PostgresLedgerOptions {
  url: string;
  table: string;
  /** Whole UTC days of single entries kept before they are folded into the daily roll-up. */
  retentionDays: number;
  connectionTimeoutMs?: number;
}

const DAY_MS = 86_400_000;
const ENTRY_COLUMNS = [
  'time', 'request_id', 'tenant', 'sub_tenant', 'subject', 'key_id', 'route', 'provider', 'model', 'operation',
  'input_tokens', 'output_tokens', 'cached_tokens', 'cost_micros', 'status', 'estimated',
] as const;
/** The roll-up's key columns; '' stands for "none" there, because NULLs never conflict in a primary key. */
const ROLLUP_KEYS = ['tenant', 'sub_tenant', 'subject', 'key_id', 'provider', 'model'] as const;
const SUMS = ['calls', 'input_tokens', 'output_tokens', 'cached_tokens', 'cost_micros', 'unpriced_calls', 'estimated_calls'] as const;

const ENTRY_GROUP: Readonly<Record<UsageGroup, string>> = {
  tenant: 'tenant',
  sub_tenant: 'sub_tenant',
  subject: 'subject',
  key: 'key_id',
  provider: 'provider',
  model: `provider || '/' || model`,
  day: `to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
};
const ROLLUP_GROUP: Readonly<Record<UsageGroup, string>> = {
  tenant: `NULLIF(tenant, '')`,
  sub_tenant: `NULLIF(sub_tenant, '')`,
  subject: `NULLIF(subject, '')`,
  key: `NULLIF(key_id, '')`,
  provider: 'provider',
  model: `provider || '/' || model`,
  day: `to_char(day, 'YYYY-MM-DD')`,
};

interface SumRow {
  grp: string | null;
  calls: string;
  input_tokens: string;
  output_tokens: string;
  cached_tokens: string;
  cost_micros: string;
  unpriced_calls: string;
  estimated_calls: string;
}

export class PostgresLedgerStore implements LedgerStore {
  private readonly pool: Pool;
  private readonly table: string;
  private readonly daily: string;
  private readonly ensureTables: () => Promise<void>;

  constructor(private readonly options: PostgresLedgerOptions) {
    if (!POSTGRES_SUFFIXED_TABLE_PATTERN.test(options.table)) throw new Error(`invalid ledger table name ${JSON.stringify(options.table)}`);
    this.table = options.table;
    this.daily = `${options.table}_daily`;
    // Required here: a configuration without PostgreSQL loads no PostgreSQL client (decision C13).
    const { Pool: PgPool } = require('pg') as typeof import('pg');
    this.pool = new PgPool({ connectionString: options.url, max: 4, connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000, idleTimeoutMillis: 30_000 });
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
    this.ensureTables = tablesCreatedOnce(this.pool, this.table, [
      `CREATE TABLE IF NOT EXISTS ${this.table} (
         id bigserial PRIMARY KEY,
         time timestamptz NOT NULL,
         request_id text, tenant text, sub_tenant text, subject text, key_id text, route text,
         provider text NOT NULL, model text NOT NULL, operation text NOT NULL,
         input_tokens bigint NOT NULL, output_tokens bigint NOT NULL, cached_tokens bigint NOT NULL,
         cost_micros bigint, status text NOT NULL, estimated boolean NOT NULL
       )`,
      `CREATE INDEX IF NOT EXISTS ${this.table}_time_idx ON ${this.table} (time)`,
      `CREATE INDEX IF NOT EXISTS ${this.table}_tenant_time_idx ON ${this.table} (tenant, time)`,
      `CREATE TABLE IF NOT EXISTS ${this.daily} (
         day date NOT NULL,
         ${ROLLUP_KEYS.map((key) => `${key} text NOT NULL`).join(', ')},
         ${SUMS.map((column) => `${column} bigint NOT NULL`).join(', ')},
         PRIMARY KEY (day, ${ROLLUP_KEYS.join(', ')})
       )`,
    ]);
  }

  async write(entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.ensureTables();
    const values: unknown[] = [];
    const rows = entries.map((entry, index) => {
      values.push(
        new Date(entry.time), entry.requestId, entry.tenant, entry.subTenant, entry.subject, entry.keyId, entry.route,
        entry.provider, entry.model, entry.operation, entry.inputTokens, entry.outputTokens, entry.cachedTokens,
        entry.costMicros, entry.status, entry.estimated,
      );
      const base = index * ENTRY_COLUMNS.length;
      return `(${ENTRY_COLUMNS.map((_, column) => `$${base + column + 1}`).join(', ')})`;
    });
    await this.pool.query(`INSERT INTO ${this.table} (${ENTRY_COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`, values);
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    await this.ensureTables();
    const params: unknown[] = [new Date(query.from), new Date(query.to)];
    const tenantFilter = query.tenant !== undefined ? (params.push(query.tenant), `AND tenant = $3`) : '';
    // A rolled-up day counts when it starts inside the range (roll-ups keep whole days only).
    const dayStart = `(day::timestamp AT TIME ZONE 'UTC')`;
    const sql = `
      SELECT ${ENTRY_GROUP[query.groupBy]} AS grp, count(*) AS calls, sum(input_tokens) AS input_tokens,
             sum(output_tokens) AS output_tokens, sum(cached_tokens) AS cached_tokens, coalesce(sum(cost_micros), 0) AS cost_micros,
             count(*) FILTER (WHERE cost_micros IS NULL) AS unpriced_calls, count(*) FILTER (WHERE estimated) AS estimated_calls
        FROM ${this.table} WHERE time >= $1 AND time < $2 ${tenantFilter} GROUP BY 1
      UNION ALL
      SELECT ${ROLLUP_GROUP[query.groupBy]} AS grp, ${SUMS.map((column) => `sum(${column}) AS ${column}`).join(', ')}
        FROM ${this.daily} WHERE ${dayStart} >= $1 AND ${dayStart} < $2 ${tenantFilter} GROUP BY 1`;
    const result = await this.pool.query<SumRow>(sql, params);
    const rows = new Map<string | null, UsageRow>();
    for (const sum of result.rows) {
      let row = rows.get(sum.grp);
      if (!row) rows.set(sum.grp, (row = emptyRow(sum.grp)));
      row.calls += Number(sum.calls);
      row.inputTokens += Number(sum.input_tokens);
      row.outputTokens += Number(sum.output_tokens);
      row.cachedTokens += Number(sum.cached_tokens);
      row.costMicros += Number(sum.cost_micros);
      row.unpricedCalls += Number(sum.unpriced_calls);
      row.estimatedCalls += Number(sum.estimated_calls);
    }
    return sortRows([...rows.values()]);
  }

  /**
   * Moves every entry before the start of (today - retention) into the daily roll-up, in one statement:
   * the DELETE hands its rows straight to the INSERT, so an entry is either still single or summed, never
   * both, and two processes folding at once sum disjoint rows.
   */
  async rollUp(now: number): Promise<number> {
    await this.ensureTables();
    const cutoff = new Date(Math.floor(now / DAY_MS) * DAY_MS - this.options.retentionDays * DAY_MS);
    const keys = ROLLUP_KEYS.join(', ');
    const result = await this.pool.query<{ folded: string }>(
      `WITH moved AS (
         DELETE FROM ${this.table} WHERE time < $1
         RETURNING time, tenant, sub_tenant, subject, key_id, provider, model, input_tokens, output_tokens, cached_tokens, cost_micros, estimated
       ), summed AS (
         INSERT INTO ${this.daily} (day, ${keys}, ${SUMS.join(', ')})
         SELECT (time AT TIME ZONE 'UTC')::date, coalesce(tenant, ''), coalesce(sub_tenant, ''), coalesce(subject, ''), coalesce(key_id, ''),
                provider, model, count(*), sum(input_tokens), sum(output_tokens), sum(cached_tokens), coalesce(sum(cost_micros), 0),
                count(*) FILTER (WHERE cost_micros IS NULL), count(*) FILTER (WHERE estimated)
           FROM moved GROUP BY 1, 2, 3, 4, 5, 6, 7
         ON CONFLICT (day, ${keys}) DO UPDATE SET ${SUMS.map((column) => `${column} = ${this.daily}.${column} + EXCLUDED.${column}`).join(', ')}
         RETURNING 1
       )
       SELECT count(*) AS folded FROM moved`,
      [cutoff],
    );
    return Number(result.rows[0]?.folded ?? 0);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** PostgreSQL's SQLSTATE for a database that does not exist (`invalid_catalog_name`). */
const UNDEFINED_DATABASE = '3D000';

/**
 * Connects once to `url` and says, without its secret, when the database it names does not exist: a mistake of
 * the configuration, which the server refuses at start instead of logging a bare `3D000` on every write. Any
 * other failure (the server not up yet, a timeout) is left to the writes' retries, as before.
 */
export async function missingDatabaseProblem(url: string, connectionTimeoutMs = 5000): Promise<string | undefined> {
  const { Client } = require('pg') as typeof import('pg');
  const client = new Client({ connectionString: url, connectionTimeoutMillis: connectionTimeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    if ((error as { code?: unknown }).code !== UNDEFINED_DATABASE) return undefined;
    const { database, server } = describePostgresUrl(url);
    return `database "${database}" does not exist on ${server}; create it or name an existing one`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The database a URL names and the server it is on, as `postgres://user:***@host:port`: never the password or the query. */
export function describePostgresUrl(url: string): { database: string; server: string } {
  const parsed = new URL(url);
  const user = parsed.username ? `${parsed.username}${parsed.password ? ':***' : ''}@` : '';
  return { database: decodeURIComponent(parsed.pathname.slice(1)), server: `${parsed.protocol}//${user}${parsed.host}` };
}
