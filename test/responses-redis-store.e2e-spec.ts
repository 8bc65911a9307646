/**
 * The Redis store of /openai/v1/responses (ai.responses.store: redis) against the real Redis of the test
 * services: item pointers belong to the owner whose response holds the item, and the count bound is each
 * owner's. The server-level loop across two
 * processes is in openai-responses.e2e-spec.ts.
 */
import { randomUUID } from 'node:crypto';
import { RedisResponseStore } from '../src/ai/http/responses/redis-response-store';
import type { ResponseBody } from '../src/ai/http/responses/responses-bodies';
import type { StoredResponse } from '../src/ai/http/responses/responses-store';
import { dropRedisKeys } from './support/store-cleanup';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `tollgate:test-responses:${randomUUID()}:`;
let store: RedisResponseStore;

function stored(id: string, owner: string, inputIds: string[]): StoredResponse {
  const output = [{ type: 'message' as const, id: `msg_out_${id}`, status: 'completed' as const, role: 'assistant' as const, content: [{ type: 'output_text', text: `answer ${id}`, annotations: [] }] }];
  const input = inputIds.map((itemId) => ({ type: 'message' as const, id: itemId, role: 'user' as const, content: [{ type: 'input_text', text: `question ${id}` }] }));
  return { owner, body: { id, object: 'response', output } as unknown as ResponseBody, input, conversation: [...input, ...output] } as StoredResponse;
}

beforeAll(async () => {
  store = new RedisResponseStore(REDIS_URL, prefix, { retentionMs: 60_000, maxStored: 3 });
  await store.onModuleInit();
});
afterAll(async () => {
  store.onModuleDestroy();
  await dropRedisKeys(REDIS_URL, prefix);
});

describe('RedisResponseStore', () => {
  it("an item id another owner sends in its own input leaves this owner's item where it was", async () => {
    const theirs = stored('resp_a', 't-a', ['msg_shared']);
    await store.save(theirs);
    // Item ids are the caller's to choose: another tenant sending the same id must not take the pointer over.
    const mine = stored('resp_b', 't-b', ['msg_shared']);
    await store.save(mine);
    expect(await store.item('t-a', 'msg_shared')).toEqual(theirs.input[0]);
    expect(await store.item('t-b', 'msg_shared')).toEqual(mine.input[0]);
    expect(await store.item('t-c', 'msg_shared')).toBeUndefined();
  });

  it("keeps at most max_stored responses per owner: one tenant's saves evict its own oldest, never another's", async () => {
    for (const id of ['resp_d1', 'resp_d2']) await store.save(stored(id, 't-d', []));
    for (const id of ['resp_e1', 'resp_e2', 'resp_e3', 'resp_e4', 'resp_e5']) await store.save(stored(id, 't-e', []));
    expect(await store.get('t-d', 'resp_d1')).toBeDefined();
    expect(await store.get('t-d', 'resp_d2')).toBeDefined();
    expect(await store.get('t-e', 'resp_e2')).toBeUndefined();
    expect(await store.get('t-e', 'resp_e3')).toBeDefined();
    expect(await store.get('t-e', 'resp_e5')).toBeDefined();
    // A deleted response frees its place: the owner's next save takes nothing.
    expect(await store.delete('t-e', 'resp_e5')).toBe(true);
    await store.save(stored('resp_e6', 't-e', []));
    expect(await store.get('t-e', 'resp_e3')).toBeDefined();
  });
});
