import { MemorySessionStore } from './memory-session-store';

describe('MemorySessionStore', () => {
  const session = { id: 's-1', principal: 'alice', protocolVersion: '2025-11-25', createdAt: 0 };

  it('returns a copy, restarts the idle timer on touch, and forgets expired or deleted sessions', async () => {
    let now = 1000;
    const store = new MemorySessionStore(() => now);
    await store.create(session, 100);
    now = 1090;
    const touched = await store.touch('s-1', 100);
    expect(touched).toEqual(session);
    touched!.principal = 'mallory';
    now = 1180;
    expect((await store.touch('s-1', 100))?.principal).toBe('alice');
    now = 1281;
    expect(await store.touch('s-1', 100)).toBeUndefined();
    expect(await store.delete('s-1')).toBe(false);
    await store.create(session, 100);
    expect(await store.delete('s-1')).toBe(true);
    expect(await store.touch('s-1', 100)).toBeUndefined();
  });
});
