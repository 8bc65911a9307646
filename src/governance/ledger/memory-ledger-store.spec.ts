import type { LedgerEntry } from './ledger-entry';
import { MemoryLedgerStore } from './memory-ledger-store';
import type { UsageQuery } from './usage-query';

const entry = (time: number, tenant = 't-1'): LedgerEntry => ({
  time,
  requestId: null,
  tenant,
  subTenant: null,
  subject: null,
  keyId: null,
  route: null,
  provider: 'openai',
  model: 'gpt-4o',
  operation: 'generate',
  inputTokens: 10,
  outputTokens: 1,
  cachedTokens: 0,
  costMicros: time === 2 ? null : 5,
  status: 'ok',
  estimated: time === 3,
});

describe('MemoryLedgerStore', () => {
  it('keeps the newest entries, overwriting the oldest, and counts what it dropped', async () => {
    const store = new MemoryLedgerStore(3);
    await store.write([entry(1), entry(2)]);
    await store.write([entry(3), entry(4), entry(5)]);
    expect(store.dropped).toBe(2);
    const rows = await store.usage({ from: 0, to: 10, groupBy: 'day' });
    expect(rows).toEqual([{ group: '1970-01-01', calls: 3, inputTokens: 30, outputTokens: 3, cachedTokens: 0, costMicros: 15, unpricedCalls: 0, estimatedCalls: 1 }]);
  });

  it('sums only the range and the tenant asked for, unpriced calls apart, groups sorted with none last', async () => {
    const store = new MemoryLedgerStore(10);
    await store.write([entry(1, 't-2'), entry(2, 't-1'), entry(3, 't-1'), entry(9, 't-1')]);
    await store.write([{ ...entry(4), tenant: null }]);
    expect((await store.usage({ from: 1, to: 9, groupBy: 'tenant' })).map((r) => [r.group, r.calls, r.costMicros, r.unpricedCalls])).toEqual([
      ['t-1', 2, 5, 1],
      ['t-2', 1, 5, 0],
      [null, 1, 5, 0],
    ]);
    expect((await store.usage({ from: 0, to: 10, groupBy: 'model', tenant: 't-2' })).map((r) => [r.group, r.calls])).toEqual([['openai/gpt-4o', 1]]);
  });

  it('answers every grouping after many distinct subjects made it rebuild its string table', async () => {
    const store = new MemoryLedgerStore(10);
    const calls = Array.from({ length: 6000 }, (_, i) => ({ ...entry(10 + i, `t-${i % 3}`), subject: `u-${i}`, keyId: i % 2 ? `k-${i % 5}` : null }));
    for (let i = 0; i < calls.length; i += 500) await store.write(calls.slice(i, i + 500));
    const last = calls.slice(-10);
    const groups = async (groupBy: UsageQuery['groupBy']) => (await store.usage({ from: 0, to: 10_000, groupBy })).map((row) => [row.group, row.calls]);
    expect(await groups('subject')).toEqual(last.map((call) => [call.subject, 1]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
    expect(await groups('tenant')).toEqual([['t-0', 3], ['t-1', 3], ['t-2', 4]]);
    expect(await groups('key')).toEqual([['k-0', 1], ['k-1', 1], ['k-2', 1], ['k-3', 1], ['k-4', 1], [null, 5]]);
    expect(await groups('model')).toEqual([['openai/gpt-4o', 10]]);
  });

  it('grows its columns as entries come and keeps every one of them in order until the bound, then the newest', async () => {
    const store = new MemoryLedgerStore(5000);
    const calls = Array.from({ length: 6001 }, (_, i) => ({ ...entry(100 + i), requestId: `r-${i}`, costMicros: i }));
    // Batches that cross each doubling (1024, 2048, 4096) and the bound (5000).
    for (let i = 0; i < calls.length; i += 700) await store.write(calls.slice(i, i + 700));
    expect(store.dropped).toBe(1001);
    const [row] = await store.usage({ from: 0, to: 10_000, groupBy: 'day' });
    expect(row.calls).toBe(5000);
    // The sum of the kept entries' costs is the sum of i over the newest 5000: any slot lost or repeated in a copy shows.
    expect(row.costMicros).toBe(((1001 + 6000) * 5000) / 2);
    expect((await store.usage({ from: 0, to: 100 + 1001, groupBy: 'day' })).length).toBe(0);
  });
});
