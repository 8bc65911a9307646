/**
 * The PostgreSQL store of /openai/v1/responses (ai.responses.store: postgres) against the real PostgreSQL of
 * the test services: owners, retention, the count bound, item pointers, and two stores (two processes) on one
 * table. The server-level loop across two processes is in openai-responses.e2e-spec.ts.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { PostgresResponseStore } from '../src/ai/http/responses/postgres-response-store';
import type { ResponseBody } from '../src/ai/http/responses/responses-bodies';
import type { StoredResponse } from '../src/ai/http/responses/responses-store';
import { dropResponseTables } from './support/store-cleanup';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const tables: string[] = [];
const stores: PostgresResponseStore[] = [];

function newTable(): string {
  const table = `responses_${randomUUID().slice(0, 8)}`;
  tables.push(table);
  return table;
}

function open(table: string, bounds = { retentionMs: 60_000, maxStored: 100 }): PostgresResponseStore {
  const store = new PostgresResponseStore(PG_URL, table, bounds);
  stores.push(store);
  return store;
}

function stored(id: string, owner = 't-a', inputIds: string[] = []): StoredResponse {
  const output = [{ type: 'message' as const, id: `msg_out_${id}`, status: 'completed' as const, role: 'assistant' as const, content: [{ type: 'output_text', text: `answer ${id}`, annotations: [] }] }];
  const input = inputIds.map((itemId) => ({ type: 'message' as const, id: itemId, role: 'user' as const, content: [{ type: 'input_text', text: `question ${id}` }] }));
  return { owner, body: { id, object: 'response', output } as unknown as ResponseBody, input, conversation: [...input, ...output] } as StoredResponse;
}

async function until(condition: () => Promise<boolean>, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('condition not met before the deadline');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function rowCount(table: string): Promise<number> {
  const sql = new Client({ connectionString: PG_URL });
  await sql.connect();
  try {
    return Number((await sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
  } finally {
    await sql.end();
  }
}

afterAll(async () => {
  await Promise.all(stores.map((store) => store.onModuleDestroy()));
  for (const table of tables) await dropResponseTables(PG_URL, table);
});

describe('PostgresResponseStore', () => {
  it('gives back what was saved, JSON key order and all, and its items by id', async () => {
    const store = open(newTable());
    const saved = stored('resp_1', 't-a', ['msg_in_1']);
    await store.save(saved);
    const read = await store.get('t-a', 'resp_1');
    expect(read).toEqual(saved);
    expect(JSON.stringify(read)).toBe(JSON.stringify(saved));
    expect(await store.item('t-a', 'msg_in_1')).toEqual(saved.input[0]);
    expect(await store.item('t-a', 'msg_out_resp_1')).toEqual(saved.body.output[0]);
    expect(await store.item('t-a', 'msg_unknown')).toBeUndefined();
  });

  it("answers another owner's response, item or deletion as missing", async () => {
    const store = open(newTable());
    await store.save(stored('resp_1', 't-a'));
    expect(await store.get('t-b', 'resp_1')).toBeUndefined();
    expect(await store.item('t-b', 'msg_out_resp_1')).toBeUndefined();
    expect(await store.delete('t-b', 'resp_1')).toBe(false);
    expect(await store.get('t-a', 'resp_1')).toBeDefined();
    expect(await store.delete('t-a', 'resp_1')).toBe(true);
    expect(await store.get('t-a', 'resp_1')).toBeUndefined();
    expect(await store.item('t-a', 'msg_out_resp_1')).toBeUndefined();
    expect(await store.delete('t-a', 'resp_1')).toBe(false);
  });

  it('forgets a response once its retention has passed, and the sweep deletes its rows and items', async () => {
    const table = newTable();
    const store = open(table, { retentionMs: 400, maxStored: 100 });
    await store.save(stored('resp_1'));
    expect(await store.get('t-a', 'resp_1')).toBeDefined();
    await until(async () => (await store.get('t-a', 'resp_1')) === undefined);
    expect(await store.item('t-a', 'msg_out_resp_1')).toBeUndefined();
    expect(await store.delete('t-a', 'resp_1')).toBe(false);
    await store.sweep();
    expect(await rowCount(table)).toBe(0);
    expect(await rowCount(`${table}_items`)).toBe(0);
  });

  it("a save sweeps on its own: another process's first save deletes what has expired", async () => {
    const table = newTable();
    const first = open(table, { retentionMs: 300, maxStored: 100 });
    await first.save(stored('resp_old'));
    await until(async () => (await first.get('t-a', 'resp_old')) === undefined);
    await open(table, { retentionMs: 60_000, maxStored: 100 }).save(stored('resp_new'));
    await until(async () => (await rowCount(table)) === 1);
    expect(await first.get('t-a', 'resp_new')).toBeDefined();
  });

  it('keeps at most max_stored responses after a sweep, dropping the oldest first', async () => {
    const table = newTable();
    const store = open(table, { retentionMs: 60_000, maxStored: 2 });
    for (const id of ['resp_1', 'resp_2', 'resp_3']) await store.save(stored(id));
    await store.sweep();
    expect(await rowCount(table)).toBe(2);
    expect(await store.get('t-a', 'resp_1')).toBeUndefined();
    expect(await store.get('t-a', 'resp_2')).toBeDefined();
    expect(await store.get('t-a', 'resp_3')).toBeDefined();
  });

  it("over max_stored the sweep takes from the owner holding the most: one tenant's saves never evict another's smaller share", async () => {
    const table = newTable();
    const store = open(table, { retentionMs: 60_000, maxStored: 4 });
    for (const id of ['resp_b1', 'resp_b2']) await store.save(stored(id, 't-b'));
    for (const id of ['resp_a1', 'resp_a2', 'resp_a3', 'resp_a4', 'resp_a5']) await store.save(stored(id, 't-a'));
    await store.sweep();
    expect(await rowCount(table)).toBe(4);
    expect(await store.get('t-b', 'resp_b1')).toBeDefined();
    expect(await store.get('t-b', 'resp_b2')).toBeDefined();
    expect(await store.get('t-a', 'resp_a3')).toBeUndefined();
    expect(await store.get('t-a', 'resp_a4')).toBeDefined();
    expect(await store.get('t-a', 'resp_a5')).toBeDefined();
  });

  it('points an item sent again (a previous output passed back as input) at the newest response holding it', async () => {
    const store = open(newTable());
    await store.save(stored('resp_1', 't-a', ['msg_in_shared']));
    await store.save(stored('resp_2', 't-a', ['msg_in_shared', 'msg_in_shared']));
    await store.delete('t-a', 'resp_1');
    expect(await store.item('t-a', 'msg_in_shared')).toMatchObject({ id: 'msg_in_shared', content: [{ text: 'question resp_2' }] });
  });

  it("an item id another owner sends in its own input leaves this owner's item where it was", async () => {
    const store = open(newTable());
    const theirs = stored('resp_a', 't-a', ['msg_shared']);
    await store.save(theirs);
    // Item ids are the caller's to choose: another tenant sending the same id must not take the pointer over.
    const mine = stored('resp_b', 't-b', ['msg_shared']);
    await store.save(mine);
    expect(await store.item('t-a', 'msg_shared')).toEqual(theirs.input[0]);
    expect(await store.item('t-b', 'msg_shared')).toEqual(mine.input[0]);
  });

  it('two stores (two processes) create the tables at once and read what the other saved', async () => {
    const table = newTable();
    const [one, two] = [open(table), open(table)];
    await Promise.all([one.save(stored('resp_one')), two.save(stored('resp_two'))]);
    expect(await one.get('t-a', 'resp_two')).toBeDefined();
    expect(await two.item('t-a', 'msg_out_resp_one')).toMatchObject({ id: 'msg_out_resp_one' });
  });

  it('refuses a table name that is not a plain SQL identifier', () => {
    expect(() => new PostgresResponseStore(PG_URL, 'responses; drop table x', { retentionMs: 1000, maxStored: 1 })).toThrow('invalid responses table name');
  });

  it('creates every index under the longest table name it takes, and refuses one character more', async () => {
    const table = `responses_${randomUUID().replace(/-/g, '')}_long`.slice(0, 44);
    expect(table).toHaveLength(44);
    tables.push(table);
    await open(table).save(stored('resp_long'));
    const client = new Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE tablename = ANY($1) ORDER BY indexname', [[table, `${table}_items`]]);
      expect(rows.map((row) => row.indexname)).toEqual(expect.arrayContaining([`${table}_created_idx`, `${table}_expires_idx`, `${table}_items_response_idx`]));
    } finally {
      await client.end();
    }
    expect(() => new PostgresResponseStore(PG_URL, `${table}x`, { retentionMs: 1000, maxStored: 1 })).toThrow('invalid responses table name');
  });
});
