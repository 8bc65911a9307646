/** Strict input rules of the vector store, as pure functions: nothing is coerced, padded or truncated. */
import { InvalidRequestError } from '../errors';
import { VECTOR_METRICS, type VectorMetric, type VectorRecord } from './vector-store.interface';

/** pgvector's `vector` type holds at most 16000 dimensions; HNSW indexes at most 2000. */
export const MAX_VECTOR_DIMENSIONS = 16_000;
export const MAX_INDEXED_DIMENSIONS = 2_000;
/** pgvector stores float4: a larger magnitude would overflow to infinity. */
const FLOAT32_MAX = 3.4028234663852886e38;
const TABLE_NAME = /^[a-z_][a-z0-9_]{0,39}$/;
const MAX_ID_CHARS = 512;
const MAX_NAME_CHARS = 256;
const MAX_CONTENT_BYTES = 1024 * 1024;
const MAX_METADATA_BYTES = 64 * 1024;

/** Lower-case identifiers only, so the name never needs quoting rules and index names stay under 63 bytes. */
export function checkTableName(table: string): string {
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    throw new InvalidRequestError('table must be a lower-case SQL identifier (a-z, digits, underscore; at most 40 characters)');
  }
  return table;
}

export function checkDimensions(dimensions: unknown): number {
  if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_VECTOR_DIMENSIONS) {
    throw new InvalidRequestError(`dimensions must be an integer from 1 to ${MAX_VECTOR_DIMENSIONS}`);
  }
  return dimensions;
}

/** Exactly `dimensions` finite numbers that fit a float4. */
export function checkEmbedding(embedding: unknown, dimensions: number, label = 'embedding'): number[] {
  if (!Array.isArray(embedding)) throw new InvalidRequestError(`${label} must be an array of numbers`);
  if (embedding.length !== dimensions) {
    throw new InvalidRequestError(`${label} must have exactly ${dimensions} dimensions (got ${embedding.length})`);
  }
  embedding.forEach((value, index) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidRequestError(`${label}[${index}] must be a finite number`);
    if (Math.abs(value) > FLOAT32_MAX) throw new InvalidRequestError(`${label}[${index}] is outside the float4 range pgvector stores`);
  });
  return embedding as number[];
}

export function checkMetric(metric: unknown): VectorMetric {
  if (!(VECTOR_METRICS as readonly unknown[]).includes(metric)) {
    throw new InvalidRequestError(`metric must be one of ${VECTOR_METRICS.join(', ')}`);
  }
  return metric as VectorMetric;
}

export function checkLimit(limit: unknown, maxLimit: number): number {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > maxLimit) {
    throw new InvalidRequestError(`limit must be an integer from 1 to ${maxLimit}`);
  }
  return limit;
}

/** Cosine similarity of a zero vector is undefined (pgvector answers NaN). */
export function checkCosineQuery(embedding: readonly number[]): void {
  if (embedding.every((value) => value === 0)) throw new InvalidRequestError('embedding must not be all zeros for the cosine metric');
}

export function checkName(value: unknown, field: string, max = MAX_NAME_CHARS): string {
  if (typeof value !== 'string' || value === '' || value.length > max) {
    throw new InvalidRequestError(`${field} must be a non-empty string of at most ${max} characters`);
  }
  return value;
}

/** The whole record, with content and metadata bounded; returns metadata as the JSON text to store. */
export function checkRecord(record: VectorRecord, dimensions: number): { metadataJson: string; content: string } {
  if (record === null || typeof record !== 'object') throw new InvalidRequestError('record must be an object');
  checkName(record.id, 'id', MAX_ID_CHARS);
  checkName(record.provider, 'provider');
  checkName(record.model, 'model');
  checkEmbedding(record.embedding, dimensions);
  const content = record.content ?? '';
  if (typeof content !== 'string') throw new InvalidRequestError('content must be a string');
  if (Buffer.byteLength(content, 'utf8') > MAX_CONTENT_BYTES) throw new InvalidRequestError(`content must be at most ${MAX_CONTENT_BYTES} bytes`);
  const metadata = record.metadata ?? {};
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new InvalidRequestError('metadata must be a JSON object');
  const metadataJson = JSON.stringify(metadata);
  if (Buffer.byteLength(metadataJson, 'utf8') > MAX_METADATA_BYTES) throw new InvalidRequestError(`metadata must be at most ${MAX_METADATA_BYTES} bytes as JSON`);
  return { metadataJson, content };
}

/** pgvector's text form: `[1,2.5,-3]`. */
export function toVectorLiteral(embedding: readonly number[]): string {
  return `[${embedding.join(',')}]`;
}
