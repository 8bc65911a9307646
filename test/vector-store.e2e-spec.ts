/**
 * The VectorStore contract, one suite run on every backend: PGlite (embedded, always) and the real
 * PostgreSQL on loopback when its `vector` extension is available (skipped with the reason printed when not).
 * Also: the clear refusal of install() on a PostgreSQL server without pgvector.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { InvalidRequestError, TollgateError } from '../src/ai/errors';
import type { PgVectorStore } from '../src/ai/vector/pgvector-store';
import { VectorStoreError } from '../src/ai/vector/vector-errors';
import { createVectorStore } from '../src/ai/vector/vector-store.factory';
import type { VectorStoreSettings } from '../src/ai/vector/vector-store.interface';

const PG_URL = process.env.TOLLGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUN = `${process.pid}_${Date.now().toString(36)}`;

/** Decided before the suites are declared, so a missing extension is a visible skip, not a silent pass. */
function postgresVectorStatus(): 'available' | 'missing' | 'unreachable' {
  const probe = `
    const { Client } = require('pg');
    const client = new Client({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 });
    client.connect()
      .then(() => client.query("select 1 from pg_available_extensions where name = 'vector'"))
      .then((r) => { process.stdout.write(r.rowCount > 0 ? 'available' : 'missing'); return client.end(); })
      .catch(() => process.stdout.write('unreachable'));`;
  try {
    return execFileSync(process.execPath, ['-e', probe, PG_URL], { cwd: join(__dirname, '..'), encoding: 'utf8', timeout: 10_000 }) as 'available';
  } catch {
    return 'unreachable';
  }
}
const PG_STATUS = postgresVectorStatus();
if (PG_STATUS !== 'available') {
  console.warn(`vector store on PostgreSQL skipped: ${PG_STATUS === 'missing' ? 'the vector extension is not available on the server (install postgresql-<version>-pgvector)' : `PostgreSQL at ${PG_URL} is not reachable`}`);
}

async function failure(call: Promise<unknown>): Promise<TollgateError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TollgateError);
  return error as TollgateError;
}

function vectorStoreContract(backend: string, settings: (table: string) => VectorStoreSettings, cleanup: (table: string) => Promise<void>) {
  describe(`VectorStore on ${backend}`, () => {
    const table = `tg_vec_${RUN}`;
    let store: PgVectorStore;

    beforeAll(async () => {
      store = await createVectorStore({ ...settings(table), dimensions: 3, maxLimit: 50 });
      await store.install();
    }, 60_000);

    afterAll(async () => {
      await store?.close();
      await cleanup(table);
    });

    /** PGlite allows one open database per data directory: the main store steps aside while another is used. */
    async function withOtherStore(other: VectorStoreSettings, use: (second: PgVectorStore) => Promise<void>): Promise<void> {
      await store.close();
      const second = await createVectorStore(other);
      try {
        await use(second);
      } finally {
        await second.close();
        store = await createVectorStore({ ...settings(table), dimensions: 3, maxLimit: 50 });
      }
    }

    it('install is idempotent; an existing table of another dimension is refused', async () => {
      await store.install();
      await withOtherStore({ ...settings(table), dimensions: 4 }, async (other) => {
        const error = await failure(other.install());
        expect(error).toBeInstanceOf(VectorStoreError);
        expect(error.message).toBe(`table ${table} holds 3-dimension embeddings, not 4; use another table`);
      });
    });

    it('upserts and finds nearest neighbours by cosine, euclidean and inner product', async () => {
      await store.upsert({ id: 'x', embedding: [1, 0, 0], provider: 'p', model: 'm', content: 'east', metadata: { tag: 'x' } });
      await store.upsert({ id: 'y', embedding: [0, 1, 0], provider: 'p', model: 'm', content: 'north' });
      await store.upsert({ id: 'far', embedding: [10, 10, 0], provider: 'p', model: 'm', content: 'far away' });

      const cosine = await store.search({ embedding: [0.9, 0.1, 0], limit: 2 });
      expect(cosine.map((m) => m.id)).toEqual(['x', 'far']);
      expect(cosine[0]).toMatchObject({ provider: 'p', model: 'm', content: 'east', metadata: { tag: 'x' } });
      expect(cosine[0].score).toBeCloseTo(0.9939, 3);
      expect(cosine[0].distance).toBeCloseTo(1 - cosine[0].score, 6);

      const euclidean = await store.search({ embedding: [0, 0.9, 0], metric: 'euclidean', limit: 3 });
      expect(euclidean.map((m) => m.id)).toEqual(['y', 'x', 'far']);
      expect(euclidean[0].distance).toBeCloseTo(0.1, 5);
      expect(euclidean[0].score).toBeCloseTo(-0.1, 5);

      const inner = await store.search({ embedding: [1, 1, 0], metric: 'inner_product', limit: 1 });
      expect(inner[0].id).toBe('far');
      expect(inner[0].score).toBeCloseTo(20, 5);
    });

    it('upsert replaces the record with the same id, provider and model; other models stay apart', async () => {
      await store.upsert({ id: 'doc', embedding: [0, 0, 1], provider: 'p', model: 'm', content: 'v1' });
      await store.upsert({ id: 'doc', embedding: [0, 0, 1], provider: 'p', model: 'm', content: 'v2', metadata: { rev: 2 } });
      await store.upsert({ id: 'doc', embedding: [0, 0, 1], provider: 'p', model: 'other', content: 'other model' });
      const mine = await store.search({ embedding: [0, 0, 1], provider: 'p', model: 'm', limit: 1 });
      expect(mine).toEqual([expect.objectContaining({ id: 'doc', content: 'v2', metadata: { rev: 2 } })]);
      const other = await store.search({ embedding: [0, 0, 1], model: 'other', limit: 10 });
      expect(other.map((m) => [m.id, m.model, m.content])).toEqual([['doc', 'other', 'other model']]);
    });

    it('storedIds answers which ids are stored for one provider and model (bulk embedding resumes on it)', async () => {
      await store.upsert({ id: 'kept-1', embedding: [1, 2, 3], provider: 'p', model: 'bulk' });
      await store.upsert({ id: 'kept-2', embedding: [1, 2, 3], provider: 'p', model: 'bulk' });
      await store.upsert({ id: 'kept-3', embedding: [1, 2, 3], provider: 'q', model: 'bulk' });
      const stored = await store.storedIds(['kept-1', 'kept-2', 'kept-3', 'missing', "it's"], 'p', 'bulk');
      expect([...stored].sort()).toEqual(['kept-1', 'kept-2']);
      expect(await store.storedIds([], 'p', 'bulk')).toEqual(new Set());
      expect(await store.checkInstalled()).toBe(3);
    });

    it('upsertMany writes a batch in one statement, the last of a repeated key winning; a bad record writes nothing', async () => {
      await store.upsertMany([
        { id: 'many-1', embedding: [1, 1, 0], provider: 'p', model: 'many', content: 'first' },
        { id: 'many-2', embedding: [0, 1, 1], provider: 'p', model: 'many', metadata: { n: 2 } },
        { id: 'many-1', embedding: [2, 1, 0], provider: 'p', model: 'many', content: 'again' },
      ]);
      const found = await store.search({ embedding: [2, 1, 0], provider: 'p', model: 'many', limit: 10 });
      expect(found.map((m) => [m.id, m.content, m.metadata])).toEqual([
        ['many-1', 'again', {}],
        ['many-2', '', { n: 2 }],
      ]);
      const error = await failure(
        store.upsertMany([
          { id: 'many-3', embedding: [1, 0, 0], provider: 'p', model: 'many' },
          { id: 'many-4', embedding: [1, 0], provider: 'p', model: 'many' },
        ]),
      );
      expect(error.message).toBe('embedding must have exactly 3 dimensions (got 2)');
      expect(await store.storedIds(['many-3', 'many-4'], 'p', 'many')).toEqual(new Set());
      await store.upsertMany([]);
    });

    it('createIndex builds an HNSW index per metric, and searches still answer', async () => {
      await store.createIndex('cosine');
      await store.createIndex('euclidean');
      await store.createIndex('inner_product');
      await store.createIndex('cosine');
      expect((await store.search({ embedding: [1, 0, 0], limit: 1 }))[0].id).toBe('x');
    });

    it('validates strictly before touching the database', async () => {
      const cases: Array<[Promise<unknown>, string]> = [
        [store.upsert({ id: 'a', embedding: [1, 2], provider: 'p', model: 'm' }), 'embedding must have exactly 3 dimensions (got 2)'],
        [store.upsert({ id: 'a', embedding: [1, 2, 3, 4], provider: 'p', model: 'm' }), 'embedding must have exactly 3 dimensions (got 4)'],
        [store.upsert({ id: 'a', embedding: [1, Number.NaN, 3], provider: 'p', model: 'm' }), 'embedding[1] must be a finite number'],
        [store.upsert({ id: 'a', embedding: [1, Infinity, 3], provider: 'p', model: 'm' }), 'embedding[1] must be a finite number'],
        [store.upsert({ id: 'a', embedding: [1e39, 0, 0], provider: 'p', model: 'm' }), 'embedding[0] is outside the float4 range pgvector stores'],
        [store.upsert({ id: 'a', embedding: ['1', 0, 0] as unknown as number[], provider: 'p', model: 'm' }), 'embedding[0] must be a finite number'],
        [store.upsert({ id: '', embedding: [1, 0, 0], provider: 'p', model: 'm' }), 'id must be a non-empty string of at most 512 characters'],
        [store.upsert({ id: 'a', embedding: [1, 0, 0], provider: 'p', model: 'm', metadata: [] as unknown as Record<string, unknown> }), 'metadata must be a JSON object'],
        [store.search({ embedding: [1, 0, 0], limit: 0 }), 'limit must be an integer from 1 to 50'],
        [store.search({ embedding: [1, 0, 0], limit: 51 }), 'limit must be an integer from 1 to 50'],
        [store.search({ embedding: [1, 0, 0], limit: 2.5 }), 'limit must be an integer from 1 to 50'],
        [store.search({ embedding: [1, 0, 0], metric: 'manhattan' as 'cosine' }), 'metric must be one of cosine, euclidean, inner_product'],
        [store.search({ embedding: [0, 0, 0] }), 'embedding must not be all zeros for the cosine metric'],
        [store.createIndex('dot' as 'cosine'), 'metric must be one of cosine, euclidean, inner_product'],
      ];
      for (const [call, message] of cases) {
        const error = await failure(call);
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect(error.message).toBe(message);
      }
    });

    it('refuses unsafe table names and reports a table that was never installed', async () => {
      for (const name of ['Bad', 'x;drop table y', '1abc', 'a'.repeat(41)]) {
        await expect(createVectorStore({ ...settings(name), dimensions: 3 })).rejects.toThrow('table must be a lower-case SQL identifier');
      }
      await withOtherStore(settings(`tg_missing_${RUN}`), async (missing) => {
        const error = await failure(missing.search({ embedding: [1, 0, 0] }));
        expect(error).toBeInstanceOf(VectorStoreError);
        expect(error.message).toBe(`table tg_missing_${RUN} does not exist; run install first (tollgate vector install)`);
        expect((await failure(missing.install())).message).toBe('dimensions must be set to install a vector table (vector.dimensions or --dimensions)');
      });
    });

    it('reads the dimension from an installed table when none is configured', async () => {
      await withOtherStore(settings(table), async (reader) => {
        await reader.upsert({ id: 'z', embedding: [0.5, 0.5, 0.5], provider: 'p', model: 'm' });
        expect((await failure(reader.upsert({ id: 'z', embedding: [1], provider: 'p', model: 'm' }))).message).toBe('embedding must have exactly 3 dimensions (got 1)');
      });
      expect((await store.search({ embedding: [0.5, 0.5, 0.5], limit: 1 }))[0].id).toBe('z');
    });
  });
}

describe('PGlite', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-pglite-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  vectorStoreContract('PGlite', (table) => ({ backend: 'pglite', dataDir, table }), async () => undefined);

  it('keeps data in data_dir across reopenings', async () => {
    const table = `tg_persist_${RUN}`;
    const first = await createVectorStore({ backend: 'pglite', dataDir, table, dimensions: 2 });
    await first.install();
    await first.upsert({ id: 'kept', embedding: [1, 2], provider: 'p', model: 'm' });
    await first.close();
    const second = await createVectorStore({ backend: 'pglite', dataDir, table });
    try {
      expect((await second.search({ embedding: [1, 2], limit: 1 }))[0].id).toBe('kept');
    } finally {
      await second.close();
    }
  }, 60_000);
});

async function dropPostgresTable(table: string): Promise<void> {
  const client = new Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`drop table if exists ${table}`);
  await client.end();
}

(PG_STATUS === 'available' ? describe : describe.skip)('PostgreSQL', () => {
  vectorStoreContract('PostgreSQL', (table) => ({ backend: 'postgres', url: PG_URL, table }), dropPostgresTable);
});

(PG_STATUS === 'missing' ? describe : describe.skip)('PostgreSQL without pgvector', () => {
  it('install() refuses with a message that says what to install, and nothing is created', async () => {
    const store = await createVectorStore({ backend: 'postgres', url: PG_URL, table: `tg_novec_${RUN}`, dimensions: 3 });
    try {
      const error = await failure(store.install());
      expect(error).toBeInstanceOf(VectorStoreError);
      expect(error.message).toBe('the vector extension is not available on this PostgreSQL server; install pgvector there (Debian: postgresql-<version>-pgvector)');
    } finally {
      await store.close();
    }
    const client = new Client({ connectionString: PG_URL });
    await client.connect();
    const exists = await client.query('select to_regclass($1) as t', [`tg_novec_${RUN}`]);
    await client.end();
    expect(exists.rows[0].t).toBeNull();
  });
});

it('an unreachable PostgreSQL is a VectorStoreError naming the code, not the address', async () => {
  const store = await createVectorStore({ backend: 'postgres', url: 'postgres://postgres@127.0.0.1:1/none', table: 't', dimensions: 3 });
  try {
    const error = await failure(store.install());
    expect(error).toBeInstanceOf(VectorStoreError);
    expect(error.message).toBe('PostgreSQL: could not check the vector extension (could not connect: ECONNREFUSED)');
  } finally {
    await store.close();
  }
});
