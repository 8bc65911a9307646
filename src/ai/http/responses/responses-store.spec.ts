import type { ResponseBody } from './responses-bodies';
import { MemoryResponseStore, type StoredResponse } from './responses-store';

function stored(id: string, owner = 't-a'): StoredResponse {
  const output = [{ type: 'message' as const, id: `msg_out_${id}`, status: 'completed' as const, role: 'assistant' as const, content: [] }];
  return { owner, body: { id, output } as unknown as ResponseBody, input: [], conversation: output };
}

describe('MemoryResponseStore', () => {
  it('forgets a response once its retention has passed, and its items with it', async () => {
    let now = 1_000;
    const store = new MemoryResponseStore({ retentionMs: 500, maxStored: 10 }, () => now);
    await store.save(stored('resp_1'));
    now = 1_499;
    expect(await store.get('t-a', 'resp_1')).toBeDefined();
    expect(await store.item('t-a', 'msg_out_resp_1')).toMatchObject({ id: 'msg_out_resp_1' });
    now = 1_500;
    expect(await store.get('t-a', 'resp_1')).toBeUndefined();
    expect(await store.item('t-a', 'msg_out_resp_1')).toBeUndefined();
  });

  it('keeps at most max_stored responses, dropping the oldest first', async () => {
    const store = new MemoryResponseStore({ retentionMs: 60_000, maxStored: 2 });
    for (const id of ['resp_1', 'resp_2', 'resp_3']) await store.save(stored(id));
    expect(await store.get('t-a', 'resp_1')).toBeUndefined();
    expect(await store.get('t-a', 'resp_2')).toBeDefined();
    expect(await store.get('t-a', 'resp_3')).toBeDefined();
  });

  it("over max_stored takes from the owner holding the most: one tenant's saves never evict another's smaller share", async () => {
    const store = new MemoryResponseStore({ retentionMs: 60_000, maxStored: 4 });
    for (const id of ['resp_b1', 'resp_b2']) await store.save(stored(id, 't-b'));
    for (const id of ['resp_a1', 'resp_a2', 'resp_a3', 'resp_a4', 'resp_a5']) await store.save(stored(id, 't-a'));
    expect(await store.get('t-b', 'resp_b1')).toBeDefined();
    expect(await store.get('t-b', 'resp_b2')).toBeDefined();
    expect(await store.get('t-a', 'resp_a3')).toBeUndefined();
    expect(await store.get('t-a', 'resp_a4')).toBeDefined();
    expect(await store.get('t-a', 'resp_a5')).toBeDefined();
    expect(await store.item('t-a', 'msg_out_resp_a3')).toBeUndefined();
    // Once the other holds as many, the older of the two equals goes first.
    await store.save(stored('resp_c1', 't-c'));
    expect(await store.get('t-b', 'resp_b1')).toBeUndefined();
    expect(await store.get('t-a', 'resp_a4')).toBeDefined();
  });

  it("answers another owner's response, item or deletion as missing", async () => {
    const store = new MemoryResponseStore({ retentionMs: 60_000, maxStored: 10 });
    await store.save(stored('resp_1', 't-a'));
    expect(await store.get('t-b', 'resp_1')).toBeUndefined();
    expect(await store.item('t-b', 'msg_out_resp_1')).toBeUndefined();
    expect(await store.delete('t-b', 'resp_1')).toBe(false);
    expect(await store.delete('t-a', 'resp_1')).toBe(true);
    expect(await store.get('t-a', 'resp_1')).toBeUndefined();
  });

  it("an item id another owner sends in its own input leaves this owner's item where it was", async () => {
    const store = new MemoryResponseStore({ retentionMs: 60_000, maxStored: 10 });
    await store.save(stored('resp_1', 't-a'));
    // Item ids are the caller's to choose: another tenant may send this one in its own input.
    const theirs = stored('resp_2', 't-b');
    theirs.input = [{ ...theirs.body.output[0], id: 'msg_out_resp_1' }];
    await store.save(theirs);
    expect(await store.item('t-a', 'msg_out_resp_1')).toMatchObject({ id: 'msg_out_resp_1' });
    expect(await store.item('t-b', 'msg_out_resp_1')).toBe(theirs.input[0]);
    await store.delete('t-b', 'resp_2');
    expect(await store.item('t-a', 'msg_out_resp_1')).toMatchObject({ id: 'msg_out_resp_1' });
  });
});
