import { MemoryLimitsStorage } from './limits-storage';

describe('MemoryLimitsStorage', () => {
  let storage: MemoryLimitsStorage;
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000, doNotFake: ['nextTick', 'setImmediate'] });
    storage = new MemoryLimitsStorage();
  });
  afterEach(() => {
    storage.onModuleDestroy();
    jest.useRealTimers();
  });

  const hit = (key = 'tenant:a') => storage.increment(key, 10_000, 2, 10_000, 'tenant');

  it('counts hits in a fixed window and blocks the hit over the limit for blockDuration', async () => {
    expect(await hit()).toEqual({ totalHits: 1, timeToExpire: 10, isBlocked: false, timeToBlockExpire: 0 });
    jest.advanceTimersByTime(4_000);
    expect(await hit()).toEqual({ totalHits: 2, timeToExpire: 6, isBlocked: false, timeToBlockExpire: 0 });
    expect(await hit()).toEqual({ totalHits: 3, timeToExpire: 6, isBlocked: true, timeToBlockExpire: 10 });
    // Other keys and other throttler names have their own counters.
    expect((await hit('tenant:b')).isBlocked).toBe(false);
    expect((await storage.increment('tenant:a', 10_000, 2, 10_000, 'token')).isBlocked).toBe(false);
  });

  it('stays blocked until the block ends even when the window restarts, then counts afresh', async () => {
    await hit();
    await hit();
    jest.advanceTimersByTime(9_000);
    expect(await hit()).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 10 });
    jest.advanceTimersByTime(2_000); // the window ended, the block has 8 s left
    expect(await hit()).toMatchObject({ totalHits: 1, isBlocked: true, timeToBlockExpire: 8 });
    jest.advanceTimersByTime(8_000);
    expect(await hit()).toMatchObject({ totalHits: 2, isBlocked: false });
  });

  it('sweeps counters whose window and block are over, keeping active ones', async () => {
    await hit('tenant:idle');
    jest.advanceTimersByTime(9_000);
    await hit('tenant:active');
    jest.advanceTimersByTime(2_000);
    storage.sweep(Date.now());
    expect(storage.size).toBe(1);
    jest.advanceTimersByTime(60_000); // the periodic sweep
    expect(storage.size).toBe(0);
  });
});
