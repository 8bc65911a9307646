import { MemoryStore } from './memory.store';

describe('MemoryStore', () => {
  let store: MemoryStore;
  // A mocked clock: a busy machine may stall longer than a short TTL between two real steps.
  beforeEach(() => jest.useFakeTimers());
  afterEach(async () => {
    await store.disconnect();
    jest.useRealTimers();
  });

  it('expires entries natively and keeps entries without TTL', async () => {
    store = new MemoryStore();
    await store.set('short', 'a', 20);
    await store.set('forever', 'b');
    expect(await store.has('short')).toBe(true);
    jest.advanceTimersByTime(19);
    expect(await store.has('short')).toBe(true);
    jest.advanceTimersByTime(1);
    expect(await store.get('short')).toBeUndefined();
    expect(await store.get('forever')).toBe('b');
  });

  it('evicts the oldest write when full', async () => {
    store = new MemoryStore(2);
    await store.set('a', 1);
    await store.set('b', 2);
    await store.set('a', 3);
    await store.set('c', 4);
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('a')).toBe(3);
    expect(await store.get('c')).toBe(4);
  });

  it('sweeps expired entries without a read', async () => {
    store = new MemoryStore(10, 10);
    await store.set('gone', 1, 5);
    const entries = (store as unknown as { entries: Map<string, unknown> }).entries;
    expect(entries.size).toBe(1);
    jest.advanceTimersByTime(10);
    expect(entries.size).toBe(0);
  });

  it('deletes and clears', async () => {
    store = new MemoryStore();
    await store.set('a', 1);
    expect(await store.delete('a')).toBe(true);
    expect(await store.delete('a')).toBe(false);
    await store.set('b', 1);
    await store.clear();
    expect(await store.has('b')).toBe(false);
  });
});
