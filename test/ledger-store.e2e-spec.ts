/**
 * The PostgreSQL ledger on a real server (127.0.0.1:5432, database test): batched writes by size and by
 * interval, entries kept across a failing write, roll-ups that move whole old days without changing any
 * report, and two processes folding at once.
 */
import { Client } from 'pg';
import type { LedgerEntry } from '../src/governance/ledger/ledger-entry';
import { LedgerWriter } from '../src/governance/ledger/ledger-writer';
import { MemoryLedgerStore } from '../src/governance/ledger/memory-ledger-store';
import { PostgresLedgerStore } from '../src/governance/ledger/postgres-ledger-store';
import { type UsageGroup, USAGE_GROUPS } from '../src/governance/ledger/usage-query';

const URL = 'postgres://postgres@127.0.0.1:5432/test';
const DAY = 86_400_000;
const NOW = Date.parse('2026-11-27T15:00:00Z');
let table = 0;
const tables: string[] = [];
const stores: PostgresLedgerStore[] = [];

function store(retentionDays = 2, url = URL): PostgresLedgerStore {
  const name = `ledger_e2e_${process.pid}_${table++}`;
  tables.push(name);
  const created = new PostgresLedgerStore({ url, table: name, retentionDays, connectionTimeoutMs: 2000 });
  stores.push(created);
  return created;
}

let sql: Client;
beforeAll(async () => {
  sql = new Client({ connectionString: URL });
  await sql.connect();
});

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close().catch(() => undefined)));
  for (const name of tables) await sql.query(`DROP TABLE IF EXISTS ${name}, ${name}_daily`);
  await sql.end();
});

async function rowsOf(name: string): Promise<number> {
  const result = await sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`).catch(() => ({ rows: [{ n: '0' }] }));
  return Number(result.rows[0].n);
}

/** Polls until `check` holds, up to a generous deadline (the machine is shared). */
async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function entry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    time: NOW,
    requestId: 'r',
    tenant: 't-1',
    subTenant: null,
    subject: 'u-1',
    keyId: null,
    route: '/v1/generate',
    provider: 'openai',
    model: 'gpt-test',
    operation: 'generate',
    inputTokens: 7,
    outputTokens: 3,
    cachedTokens: 0,
    costMicros: 12,
    status: 'ok',
    estimated: false,
    ...overrides,
  };
}

/** A spread of entries over six days, two tenants, keys, models, priced and unpriced, estimated and not. */
function history(): LedgerEntry[] {
  const entries: LedgerEntry[] = [];
  for (let day = 0; day < 6; day++) {
    for (let i = 0; i < 7; i++) {
      entries.push(
        entry({
          time: NOW - day * DAY - i * 3_600_000,
          tenant: i % 3 === 0 ? null : i % 2 === 0 ? 't-1' : 't-2',
          subTenant: i % 2 === 0 ? 'north' : null,
          subject: i % 3 === 0 ? null : `u-${i}`,
          keyId: i === 4 ? 'k-1' : null,
          model: i % 2 === 0 ? 'gpt-test' : 'claude-test',
          provider: i % 2 === 0 ? 'openai' : 'claude',
          inputTokens: 10 + i + day,
          outputTokens: 5 + day,
          cachedTokens: i,
          costMicros: i === 5 ? null : 100 * (i + 1),
          estimated: i === 6,
        }),
      );
    }
  }
  return entries;
}

describe('LedgerWriter on PostgreSQL', () => {
  it('writes a batch as soon as it is full, and a partial batch at the interval', async () => {
    const ledger = store();
    const name = tables.at(-1)!;
    const bySize = new LedgerWriter(ledger, { batchSize: 5, flushIntervalMs: 3_600_000, maxPending: 100 });
    for (let i = 0; i < 4; i++) bySize.add(entry());
    expect(bySize.queued).toBe(4);
    expect(await rowsOf(name)).toBe(0);
    bySize.add(entry());
    await eventually(async () => (await rowsOf(name)) === 5);
    await bySize.close();

    const byTime = new LedgerWriter(ledger, { batchSize: 1000, flushIntervalMs: 100, maxPending: 100 });
    byTime.add(entry());
    await eventually(async () => (await rowsOf(name)) === 6);
    await byTime.close();
  });

  it('keeps a failed batch for the next write, and close() writes everything queued', async () => {
    const down = new PostgresLedgerStore({ url: 'postgres://postgres@127.0.0.1:1/test', table: 'unreachable', retentionDays: 1, connectionTimeoutMs: 500 });
    stores.push(down);
    const errors: unknown[] = [];
    const failing = new LedgerWriter(down, { batchSize: 2, flushIntervalMs: 3_600_000, maxPending: 3, onWriteError: (error) => errors.push(error) });
    for (let i = 0; i < 4; i++) failing.add(entry());
    await failing.flush();
    expect(errors.length).toBeGreaterThan(0);
    // Four entries, at most three kept while the store is down: the oldest was dropped and counted.
    expect(failing.queued).toBe(3);
    expect(failing.dropped).toBe(1);

    const ledger = store();
    const writer = new LedgerWriter(ledger, { batchSize: 7, flushIntervalMs: 3_600_000, maxPending: 100 });
    for (let i = 0; i < 20; i++) writer.add(entry({ requestId: `r-${i}` }));
    await writer.close();
    expect(await rowsOf(tables.at(-1)!)).toBe(20);
    writer.add(entry());
    expect(writer.dropped).toBe(1);
  });
});

describe('PostgresLedgerStore roll-up', () => {
  const wholeDays = { from: NOW - 10 * DAY - (NOW % DAY), to: NOW - (NOW % DAY) + DAY };

  it('folds whole days before the retention into the daily table; every report reads the same before and after', async () => {
    const ledger = store(2);
    const name = tables.at(-1)!;
    const entries = history();
    await ledger.write(entries);
    const reference = new MemoryLedgerStore(10_000);
    await reference.write(entries);
    const report = (s: { usage: PostgresLedgerStore['usage'] }, groupBy: UsageGroup, tenant?: string) =>
      s.usage({ ...wholeDays, groupBy, ...(tenant ? { tenant } : {}) });

    for (const groupBy of USAGE_GROUPS) expect(await report(ledger, groupBy)).toEqual(await report(reference, groupBy));

    const cutoff = NOW - (NOW % DAY) - 2 * DAY;
    const old = entries.filter((e) => e.time < cutoff).length;
    expect(old).toBeGreaterThan(0);
    expect(await ledger.rollUp(NOW)).toBe(old);
    expect(await rowsOf(name)).toBe(entries.length - old);
    expect(await rowsOf(`${name}_daily`)).toBeGreaterThan(0);

    for (const groupBy of USAGE_GROUPS) expect(await report(ledger, groupBy)).toEqual(await report(reference, groupBy));
    expect(await report(ledger, 'model', 't-1')).toEqual(await report(reference, 'model', 't-1'));
    // A model is named provider/model, as everywhere else, in single entries and roll-ups alike.
    expect((await report(ledger, 'model')).map((row) => row.group)).toEqual(['claude/claude-test', 'openai/gpt-test']);
    expect(await ledger.rollUp(NOW)).toBe(0);
    expect(await report(ledger, 'day')).toEqual(await report(reference, 'day'));
  });

  it('adds a later roll-up of the same day to the sums already there', async () => {
    const ledger = store(1);
    const day = NOW - 5 * DAY;
    await ledger.write([entry({ time: day })]);
    await ledger.rollUp(NOW);
    await ledger.write([entry({ time: day + 1000, costMicros: null, estimated: true })]);
    await ledger.rollUp(NOW);
    const [row] = await ledger.usage({ from: day - (day % DAY), to: day - (day % DAY) + DAY, groupBy: 'tenant' });
    expect(row).toEqual({ group: 't-1', calls: 2, inputTokens: 14, outputTokens: 6, cachedTokens: 0, costMicros: 12, unpricedCalls: 1, estimatedCalls: 1 });
  });

  it('loses and doubles nothing when two processes fold the same table at once', async () => {
    const first = store(0);
    const name = tables.at(-1)!;
    const second = new PostgresLedgerStore({ url: URL, table: name, retentionDays: 0 });
    stores.push(second);
    const entries = history();
    await first.write(entries);
    const before = await first.usage({ ...wholeDays, groupBy: 'day' });
    const folded = await Promise.all([first.rollUp(NOW + DAY), second.rollUp(NOW + DAY)]);
    expect(folded[0] + folded[1]).toBe(entries.length);
    expect(await rowsOf(name)).toBe(0);
    expect(await second.usage({ ...wholeDays, groupBy: 'day' })).toEqual(before);
  });
});
