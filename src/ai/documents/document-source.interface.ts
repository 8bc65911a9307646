import type { ContextItem } from '../prompts/context-rendering';

/** Bounds of every JSON document source (docs/decisions.md B3: 100 documents, 1 MiB). */
export interface DocumentBounds {
  maxDocuments: number;
  /** Bytes of the source as stored: a file's size, a value's length, in-memory documents as JSON. */
  maxBytes: number;
}

export const DEFAULT_DOCUMENT_BOUNDS: Readonly<DocumentBounds> = Object.freeze({ maxDocuments: 100, maxBytes: 1024 * 1024 });

/** Where generation context comes from: a file, documents in memory, a key in a key-value store. */
export interface DocumentSource {
  /** Names the source in messages (`--json-file`, `documents`, `key "docs"`), never its content. */
  readonly label: string;
  /** The documents as context items; throws InvalidRequestError for content that breaks the rules. */
  load(): Promise<ContextItem[]>;
}

/**
 * The part of a key-value client a source needs; node-redis and ioredis clients fit as they are.
 * `strLen` (node-redis; pass ioredis's `strlen` through it) lets an oversized value be refused before it is read.
 */
export interface KeyValueReader {
  get(key: string): Promise<string | Buffer | null | undefined>;
  strLen?(key: string): Promise<number>;
}
