/**
 * What a suite leaves in the shared stores, removed when it ends: its own Redis keys (each suite writes under a
 * prefix of its own, so suites sharing the server never touch each other's) and its PostgreSQL ledger tables.
 */
import Redis from 'ioredis';
import { Client } from 'pg';

/** Deletes every key under `prefix`, on a connection of its own. */
export async function dropRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}

/** Drops a ledger table and its daily roll-ups (`<table>_daily`). */
export async function dropLedgerTables(url: string, table: string): Promise<void> {
  const sql = new Client({ connectionString: url });
  await sql.connect();
  try {
    await sql.query(`DROP TABLE IF EXISTS ${table}, ${table}_daily`);
  } finally {
    await sql.end();
  }
}

/** Drops a response store's tables (`<table>_items` first: it refers to `<table>`). */
export async function dropResponseTables(url: string, table: string): Promise<void> {
  const sql = new Client({ connectionString: url });
  await sql.connect();
  try {
    await sql.query(`DROP TABLE IF EXISTS ${table}_items, ${table}`);
  } finally {
    await sql.end();
  }
}
