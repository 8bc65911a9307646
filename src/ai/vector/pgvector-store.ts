/**
 * VectorStore on pgvector, the same SQL for PostgreSQL and PGlite. One table per store: records are keyed
 * by (id, provider, model) so embeddings of different models never mix, and searches filter on them.
 */
import { InvalidRequestError, TollgateError } from '../errors';
import { networkCode, type SqlExecutor, sqlState } from './sql-executor';
import { VectorStoreError } from './vector-errors';
import type { VectorMatch, VectorMetric, VectorQuery, VectorRecord, VectorStore } from './vector-store.interface';
import {
  checkCosineQuery,
  checkDimensions,
  checkEmbedding,
  checkLimit,
  checkMetric,
  checkName,
  checkRecord,
  checkTableName,
  MAX_INDEXED_DIMENSIONS,
  toVectorLiteral,
} from './vector-validation';

export const DEFAULT_VECTOR_TABLE = 'tollgate_vectors';
export const DEFAULT_VECTOR_LIMIT = 10;
export const DEFAULT_VECTOR_MAX_LIMIT = 100;
/** Records per upsertMany statement: 6 parameters each, far below PostgreSQL's 65,535. */
export const MAX_UPSERT_BATCH = 1000;

/** pgvector operator and HNSW operator class per metric; ORDER BY on the operator lets the index serve it. */
const METRICS: Record<VectorMetric, { operator: string; opclass: string; score: (distance: number) => number }> = {
  cosine: { operator: '<=>', opclass: 'vector_cosine_ops', score: (distance) => 1 - distance },
  euclidean: { operator: '<->', opclass: 'vector_l2_ops', score: (distance) => -distance },
  inner_product: { operator: '<#>', opclass: 'vector_ip_ops', score: (distance) => -distance },
};

export interface PgVectorStoreOptions {
  table?: string;
  /** Required by install(); otherwise read from the existing table. */
  dimensions?: number;
  metric?: VectorMetric;
  maxLimit?: number;
  /** Names the backend in messages (`PostgreSQL`, `PGlite`). */
  backend: string;
}

interface MatchRow {
  id: string;
  provider: string;
  model: string;
  content: string;
  metadata: Record<string, unknown> | string;
  distance: number;
}

export class PgVectorStore implements VectorStore {
  private readonly table: string;
  private readonly metric: VectorMetric;
  private readonly maxLimit: number;
  private dimensions?: number;

  constructor(
    private readonly sql: SqlExecutor,
    private readonly options: PgVectorStoreOptions,
  ) {
    this.table = checkTableName(options.table ?? DEFAULT_VECTOR_TABLE);
    this.metric = checkMetric(options.metric ?? 'cosine');
    this.maxLimit = options.maxLimit ?? DEFAULT_VECTOR_MAX_LIMIT;
    if (options.dimensions !== undefined) this.dimensions = checkDimensions(options.dimensions);
  }

  async install(): Promise<void> {
    if (this.dimensions === undefined) throw new InvalidRequestError('dimensions must be set to install a vector table (vector.dimensions or --dimensions)');
    const available = await this.run('check the vector extension', "select installed_version from pg_available_extensions where name = 'vector'");
    if (available.length === 0) {
      throw new VectorStoreError(
        `the vector extension is not available on this ${this.options.backend} server; install pgvector there (Debian: postgresql-<version>-pgvector)`,
      );
    }
    if ((available[0] as { installed_version: string | null }).installed_version === null) {
      await this.run('create the vector extension (it needs a user allowed to create extensions)', 'create extension if not exists vector');
    }
    await this.run(
      `create table ${this.table}`,
      `create table if not exists ${this.table} (
        id text not null,
        provider text not null,
        model text not null,
        content text not null default '',
        metadata jsonb not null default '{}'::jsonb,
        embedding vector(${this.dimensions}) not null,
        updated_at timestamptz not null default now(),
        primary key (id, provider, model)
      )`,
    );
    const existing = await this.tableDimensions();
    if (existing !== this.dimensions) {
      throw new VectorStoreError(`table ${this.table} holds ${existing}-dimension embeddings, not ${this.dimensions}; use another table`);
    }
  }

  async createIndex(metric: VectorMetric = this.metric): Promise<void> {
    const { opclass } = METRICS[checkMetric(metric)];
    const dimensions = await this.resolveDimensions();
    if (dimensions > MAX_INDEXED_DIMENSIONS) {
      throw new InvalidRequestError(`HNSW indexes hold at most ${MAX_INDEXED_DIMENSIONS} dimensions; this table has ${dimensions}`);
    }
    await this.run(`create the ${metric} index on ${this.table}`, `create index if not exists ${this.table}_${metric}_hnsw on ${this.table} using hnsw (embedding ${opclass})`);
  }

  async upsert(record: VectorRecord): Promise<void> {
    await this.upsertMany([record]);
  }

  /**
   * Several records in one statement (bulk embedding writes a batch at a time). Every record is checked
   * before anything is written; a key given twice keeps its last record, since one statement may not update
   * a row twice.
   */
  async upsertMany(records: readonly VectorRecord[]): Promise<void> {
    if (!Array.isArray(records)) throw new InvalidRequestError('records must be an array');
    if (records.length === 0) return;
    if (records.length > MAX_UPSERT_BATCH) throw new InvalidRequestError(`at most ${MAX_UPSERT_BATCH} records per upsert`);
    const dimensions = await this.resolveDimensions();
    const rows = new Map<string, unknown[]>();
    for (const record of records) {
      const { metadataJson, content } = checkRecord(record, dimensions);
      rows.set(JSON.stringify([record.id, record.provider, record.model]), [
        record.id,
        record.provider,
        record.model,
        content,
        metadataJson,
        toVectorLiteral(record.embedding),
      ]);
    }
    const values = [...rows.values()];
    const placeholders = values.map((_, row) => {
      const at = row * 6;
      return `($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}::jsonb, $${at + 6}::vector, now())`;
    });
    await this.run(
      `write to ${this.table}`,
      `insert into ${this.table} (id, provider, model, content, metadata, embedding, updated_at)
       values ${placeholders.join(', ')}
       on conflict (id, provider, model) do update
       set content = excluded.content, metadata = excluded.metadata, embedding = excluded.embedding, updated_at = now()`,
      values.flat(),
    );
  }

  async search(query: VectorQuery): Promise<VectorMatch[]> {
    const dimensions = await this.resolveDimensions();
    const embedding = checkEmbedding(query?.embedding, dimensions);
    const metric = checkMetric(query.metric ?? this.metric);
    const limit = checkLimit(query.limit ?? DEFAULT_VECTOR_LIMIT, this.maxLimit);
    if (metric === 'cosine') checkCosineQuery(embedding);
    const params: unknown[] = [toVectorLiteral(embedding)];
    const filters: string[] = [];
    if (query.provider !== undefined) filters.push(`provider = $${params.push(checkName(query.provider, 'provider'))}`);
    if (query.model !== undefined) filters.push(`model = $${params.push(checkName(query.model, 'model'))}`);
    const { operator, score } = METRICS[metric];
    const rows = (await this.run(
      `search ${this.table}`,
      `select id, provider, model, content, metadata, embedding ${operator} $1::vector as distance
       from ${this.table}${filters.length ? ` where ${filters.join(' and ')}` : ''}
       order by embedding ${operator} $1::vector
       limit ${limit}`,
      params,
    )) as MatchRow[];
    return rows.map((row) => {
      const distance = Number(row.distance);
      return {
        id: row.id,
        provider: row.provider,
        model: row.model,
        content: row.content,
        metadata: typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, unknown>) : row.metadata,
        distance,
        score: score(distance),
      };
    });
  }

  /** The table's embedding length; fails naming the table when it was never installed. */
  checkInstalled(): Promise<number> {
    return this.resolveDimensions();
  }

  /** Which of `ids` are stored for this provider and model (bulk embedding resumes by skipping them). */
  async storedIds(ids: readonly string[], provider: string, model: string): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = (await this.run(
      `read ids from ${this.table}`,
      `select id from ${this.table} where provider = $1 and model = $2 and id = any($3::text[])`,
      [checkName(provider, 'provider'), checkName(model, 'model'), [...ids]],
    )) as Array<{ id: string }>;
    return new Set(rows.map((row) => row.id));
  }

  /** Where this store lives, for messages and CLI output (dimensions once known). */
  info(): { backend: string; table: string; metric: VectorMetric; dimensions?: number } {
    return { backend: this.options.backend, table: this.table, metric: this.metric, dimensions: this.dimensions };
  }

  close(): Promise<void> {
    return this.sql.close();
  }

  /** The configured dimension, else the existing table's (read once). */
  private async resolveDimensions(): Promise<number> {
    if (this.dimensions === undefined) this.dimensions = await this.tableDimensions();
    return this.dimensions;
  }

  /** For the `vector` type, atttypmod is the dimension. */
  private async tableDimensions(): Promise<number> {
    const rows = await this.run(
      `read the definition of ${this.table}`,
      "select a.atttypmod as dimensions from pg_attribute a where a.attrelid = to_regclass($1) and a.attname = 'embedding' and not a.attisdropped",
      [this.table],
    );
    if (rows.length === 0) throw new VectorStoreError(`table ${this.table} does not exist; run install first (tollgate vector install)`);
    return Number((rows[0] as { dimensions: number }).dimensions);
  }

  /** Runs one statement; a driver failure becomes a VectorStoreError naming the action and the SQLSTATE only. */
  private async run(action: string, text: string, params?: unknown[]): Promise<unknown[]> {
    try {
      return (await this.sql.query(text, params)).rows;
    } catch (error) {
      if (error instanceof TollgateError) throw error;
      const state = sqlState(error);
      if (state === '42P01') throw new VectorStoreError(`table ${this.table} does not exist; run install first (tollgate vector install)`);
      const network = networkCode(error);
      const reason = state ? `SQLSTATE ${state}` : network ? `could not connect: ${network}` : 'unknown error';
      throw new VectorStoreError(`${this.options.backend}: could not ${action} (${reason})`);
    }
  }
}
