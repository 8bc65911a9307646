/**
 * The Redis store of /openai/v1/responses (ai.responses.store: redis) against the real Redis of the test
 * services: item pointers belong to the owner whose response holds the item. The server-level loop across two
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
  store = new RedisResponseStore(REDIS_URL, prefix, 60_000);
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
});
