/** The vector store boundary (docs/search-agent-mcp.md): pgvector behind one interface, whatever runs it. */

export const VECTOR_METRICS = ['cosine', 'euclidean', 'inner_product'] as const;
export type VectorMetric = (typeof VECTOR_METRICS)[number];

export interface VectorRecord {
  /** Caller's id; unique per provider and model (a text embedded by two models is two records). */
  id: string;
  embedding: number[];
  /** The provider and model that produced the embedding: vectors of different models are never compared. */
  provider: string;
  model: string;
  content?: string;
  metadata?: Record<string, unknown>;
}

export interface VectorQuery {
  embedding: number[];
  limit?: number;
  /** Default: the store's configured metric. */
  metric?: VectorMetric;
  /** When given, only records of this provider (and model) are compared. */
  provider?: string;
  model?: string;
}

export interface VectorMatch {
  id: string;
  provider: string;
  model: string;
  content: string;
  metadata: Record<string, unknown>;
  /** pgvector's distance for the metric (cosine distance, L2 distance, negative inner product). */
  distance: number;
  /** Higher is closer: cosine similarity, negative L2 distance, inner product. */
  score: number;
}

export interface VectorStore {
  /** Creates the extension (when allowed) and the table; refuses an existing table of another dimension. */
  install(): Promise<void>;
  /** An HNSW index for one metric; searches with that metric use it. */
  createIndex(metric?: VectorMetric): Promise<void>;
  upsert(record: VectorRecord): Promise<void>;
  /** Several records in one statement; all are checked before any is written. */
  upsertMany(records: readonly VectorRecord[]): Promise<void>;
  search(query: VectorQuery): Promise<VectorMatch[]>;
  /** Which of `ids` are stored for this provider and model. */
  storedIds(ids: readonly string[], provider: string, model: string): Promise<Set<string>>;
  close(): Promise<void>;
}

export type VectorBackend = 'pglite' | 'postgres';

export interface VectorStoreSettings {
  backend: VectorBackend;
  /** postgres: connection URL. */
  url?: string;
  /** pglite: data directory; in memory when unset. */
  dataDir?: string;
  /** Table name (default tollgate_vectors). */
  table?: string;
  /** Exact embedding length; required to install, and checked on every upsert and search. */
  dimensions?: number;
  /** Default metric (cosine). */
  metric?: VectorMetric;
  /** Largest search limit (default 100). */
  maxLimit?: number;
}
