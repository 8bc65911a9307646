import { CountingBudgetEngine, type Reservation } from './budget-engine';
import { BudgetExceededError, InvalidBudgetError, RateLimitExceededError } from './budget-errors';
import type { MeteredScope, Usage } from './budget-scope';
import { MemoryCounterStore } from './memory-counter-store';

describe('CountingBudgetEngine on memory', () => {
  let now = Date.parse('2026-11-27T23:59:00Z');
  let store: MemoryCounterStore;
  let engine: CountingBudgetEngine;
  beforeEach(() => {
    now = Date.parse('2026-11-27T23:59:00Z');
    store = new MemoryCounterStore(() => now);
    engine = new CountingBudgetEngine(store, 'p:', () => now);
  });
  afterEach(() => engine.close());
  /** As a promise, so that a refusal (thrown synchronously by the memory store) is a rejection. */
  const reserve = async (scopes: readonly MeteredScope[], estimate: Usage) => engine.reserve(scopes, estimate);

  const tenant: MeteredScope = { kind: 'tenant', id: 't-1', period: 'day', limit: { micros: 100 } };
  const key: MeteredScope = { kind: 'key', id: 'k-1', period: 'day', limit: { tokens: 1000 } };
  const dayKey = (scope: MeteredScope) => `p:c:day:2026-11-27:${scope.kind}:${scope.id}`;

  it('answers synchronously, counters being in this process', () => {
    const reservation = engine.reserve([tenant], { micros: 10, tokens: 0 });
    expect(reservation).toMatchObject({ keys: [dayKey(tenant)], done: false });
    expect(engine.settle(reservation as Reservation, { micros: 4, tokens: 0 })).toBeUndefined();
    expect(store.read(dayKey(tenant))).toEqual({ micros: 4, tokens: 0, requests: 1 });
  });

  it('reserves in every scope or in none', async () => {
    await reserve([tenant, key], { micros: 60, tokens: 10 });
    await expect(reserve([key, tenant], { micros: 60, tokens: 10 })).rejects.toBeInstanceOf(BudgetExceededError);
    await expect(reserve([key], { micros: 0, tokens: 991 })).rejects.toThrow(
      "This call's estimate (991 tokens) is more than the 990 left of the daily token budget of key k-1 (1000 tokens)",
    );
    expect(store.read(dayKey(key))).toEqual({ micros: 60, tokens: 10, requests: 1 });
    expect(store.read(dayKey(tenant))).toEqual({ micros: 60, tokens: 10, requests: 1 });
  });

  it('allows spending up to the limit exactly, and names the scope and the reset time when refusing', async () => {
    await reserve([tenant], { micros: 50, tokens: 0 });
    await reserve([tenant], { micros: 50, tokens: 0 });
    const refused = await reserve([tenant], { micros: 1, tokens: 0 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BudgetExceededError);
    expect(refused).toMatchObject({ field: 'micros', resetAt: new Date('2026-11-28T00:00:00Z') });
    expect((refused as Error).message).toBe('The daily budget of tenant t-1 ($0.000100) is spent; it resets at 2026-11-28T00:00:00.000Z.');
  });

  it('settles by the difference between actual and reserved, and releases the estimate but not the request, once', async () => {
    const first = await reserve([tenant, key], { micros: 40, tokens: 300 });
    await engine.settle(first, { micros: 10, tokens: 120 });
    await engine.settle(first, { micros: 99, tokens: 999 });
    expect(store.read(dayKey(key))).toEqual({ micros: 10, tokens: 120, requests: 1 });
    const second = await reserve([tenant, key], { micros: 20, tokens: 5 });
    await engine.release(second);
    await engine.release(second);
    expect(store.read(dayKey(tenant))).toEqual({ micros: 10, tokens: 120, requests: 2 });
  });

  it('starts afresh in the next window, and a late settle does not touch it', async () => {
    await reserve([tenant], { micros: 100, tokens: 0 });
    const late = await reserve([key], { micros: 0, tokens: 500 });
    await expect(reserve([tenant], { micros: 1, tokens: 0 })).rejects.toBeInstanceOf(BudgetExceededError);
    now = Date.parse('2026-11-28T00:00:00Z');
    await reserve([tenant], { micros: 100, tokens: 0 });
    await engine.settle(late, { micros: 0, tokens: 900 });
    expect(store.read('p:c:day:2026-11-28:key:k-1')).toBeUndefined();
    store.sweep(now);
    expect(store.size).toBe(1);
  });

  it('charges the counters of the current window when one scopes array is reused across windows', async () => {
    // BudgetsService hands a caller's calls the same array; the engine's plan of it must follow the clock.
    const scopes = [tenant, { kind: 'key', id: 'k-1', period: 'minute', limit: { requests: 1 } }] as const;
    await reserve(scopes, { micros: 100, tokens: 0 });
    await expect(reserve(scopes, { micros: 0, tokens: 0 })).rejects.toBeInstanceOf(RateLimitExceededError);
    now = Date.parse('2026-11-28T00:00:30Z');
    const next = await reserve(scopes, { micros: 100, tokens: 0 });
    expect(next.keys).toEqual(['p:c:day:2026-11-28:tenant:t-1', 'p:c:minute:2026-11-28T00:00:key:k-1']);
    now = Date.parse('2026-11-28T00:01:00Z');
    await expect(reserve(scopes, { micros: 1, tokens: 0 })).rejects.toThrow('daily budget of tenant t-1');
    expect((await reserve([{ kind: 'key', id: 'k-1', period: 'minute', limit: { requests: 1 } }], { micros: 0, tokens: 0 })).keys).toEqual([
      'p:c:minute:2026-11-28T00:01:key:k-1',
    ]);
  });

  it('counts requests and tokens per minute, refusing with a rate-limit error', async () => {
    const rate: MeteredScope = { kind: 'subject', id: 'u-1', period: 'minute', limit: { requests: 2, tokens: 100 } };
    await reserve([rate], { micros: 0, tokens: 10 });
    await reserve([rate], { micros: 0, tokens: 10 });
    const refused = await reserve([rate], { micros: 0, tokens: 10 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitExceededError);
    expect(refused).toMatchObject({ field: 'requests', resetAt: new Date('2026-11-28T00:00:00Z') });
  });

  it('refuses bad scopes and estimates with every problem named', async () => {
    const refused = await reserve([{ kind: 'tenant', id: 't', period: 'year' as 'day', limit: { micros: -1 } }], { micros: -2, tokens: 0 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidBudgetError);
    expect((refused as InvalidBudgetError).problems).toEqual([
      'tenant "t": period must be day or month, got "year"',
      'tenant "t": limit.micros must be a non-negative integer, got -1',
      'estimate.micros must be a non-negative integer, got -2',
    ]);
  });
});
