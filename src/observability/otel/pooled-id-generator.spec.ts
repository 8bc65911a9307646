import { PooledIdGenerator } from './pooled-id-generator';

describe('PooledIdGenerator', () => {
  it('gives 32- and 16-digit lowercase hex ids, never all zeros, all distinct across several pool refills', () => {
    const ids = new PooledIdGenerator();
    const traceIds = Array.from({ length: 1000 }, () => ids.generateTraceId());
    const spanIds = Array.from({ length: 1000 }, () => ids.generateSpanId());
    for (const id of traceIds) expect(id).toMatch(/^[0-9a-f]{32}$/);
    for (const id of spanIds) expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(traceIds).not.toContain('0'.repeat(32));
    expect(spanIds).not.toContain('0'.repeat(16));
    // 24,000 bytes drawn: the 4 KiB pool was refilled, and no refill repeated what an earlier one gave.
    expect(new Set(traceIds).size).toBe(traceIds.length);
    expect(new Set(spanIds).size).toBe(spanIds.length);
  });

  it('discards an all-zero draw', () => {
    const ids = new PooledIdGenerator();
    const pool = (ids as unknown as { pool: Buffer }).pool;
    ids.generateSpanId();
    // The next 8 bytes zeroed: that draw is skipped and the following bytes make the id.
    pool.fill(0, 8, 16);
    pool.fill(0xab, 16, 24);
    expect(ids.generateSpanId()).toBe('ab'.repeat(8));
  });
});
