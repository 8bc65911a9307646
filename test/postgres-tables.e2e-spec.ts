/**
 * tablesCreatedOnce (src/auth/stores/postgres-table.ts), what the PostgreSQL ledger and responses stores create
 * their tables with, against the real PostgreSQL of the test services: the statements run once per pool, a
 * failure is tried again on the next call, and pools creating the same tables at once all succeed.
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { tablesCreatedOnce } from '../src/auth/stores/postgres-table';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pools: Pool[] = [];
const tables: string[] = [];

function newPool(): Pool {
  const pool = new Pool({ connectionString: PG_URL, max: 2 });
  pools.push(pool);
  return pool;
}

function newTable(): string {
  const table = `created_once_${randomUUID().slice(0, 8)}`;
  tables.push(table);
  return table;
}

afterAll(async () => {
  const pool = newPool();
  for (const table of tables) await pool.query(`DROP TABLE IF EXISTS ${table}_child, ${table}`);
  await Promise.all(pools.map((each) => each.end()));
});

describe('tablesCreatedOnce', () => {
  it('runs the statements once per pool, however many calls wait on them', async () => {
    const table = newTable();
    const pool = newPool();
    // Each run of the statements adds a row, so the count says how many runs there were.
    const ensureTables = tablesCreatedOnce(pool, table, [
      `CREATE TABLE IF NOT EXISTS ${table} (run serial PRIMARY KEY)`,
      `INSERT INTO ${table} DEFAULT VALUES`,
    ]);
    await Promise.all([ensureTables(), ensureTables(), ensureTables()]);
    await ensureTables();
    expect((await pool.query(`SELECT count(*)::int AS runs FROM ${table}`)).rows[0].runs).toBe(1);
  });

  it('rolls a failed run back whole and runs it again on the next call', async () => {
    const table = newTable();
    const pool = newPool();
    const ensureTables = tablesCreatedOnce(pool, table, [
      `CREATE TABLE IF NOT EXISTS ${table}_child (parent int REFERENCES ${table} (id))`,
    ]);
    await expect(ensureTables()).rejects.toThrow(`relation "${table}" does not exist`);
    await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY)`);
    await ensureTables();
    expect((await pool.query(`SELECT to_regclass($1) AS child`, [`${table}_child`])).rows[0].child).toBe(`${table}_child`);
  });

  it('lets several pools (processes) create the same tables at once', async () => {
    const table = newTable();
    const statements = [
      `CREATE TABLE IF NOT EXISTS ${table} (id int PRIMARY KEY)`,
      `CREATE INDEX IF NOT EXISTS ${table}_id_idx ON ${table} (id)`,
      `CREATE TABLE IF NOT EXISTS ${table}_child (parent int REFERENCES ${table} (id))`,
    ];
    const runs = Array.from({ length: 6 }, () => tablesCreatedOnce(newPool(), table, statements)());
    await expect(Promise.all(runs)).resolves.toHaveLength(6);
  });
});
