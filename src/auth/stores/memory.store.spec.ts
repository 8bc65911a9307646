import { MemoryStore } from './memory.store';

describe('MemoryStore', () => {
  let store: MemoryStore;
  afterEach(() => store.disconnect());

  it('expires entries natively and keeps entries without TTL', async () => {
    store = new MemoryStore();
    await store.set('short', 'a', 20);
    await store.set('forever', 'b');
    expect(await store.has('short')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 30));
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
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect((store as unknown as { entries: Map<string, unknown> }).entries.size).toBe(0);
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
