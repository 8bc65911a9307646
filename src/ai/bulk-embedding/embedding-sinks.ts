import { createReadStream } from 'node:fs';
import { type FileHandle, open, stat, truncate } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { VectorStore } from '../vector/vector-store.interface';
import type { EmbeddedRecord, EmbeddingSink } from './bulk-embedder';

/** A line of the output file that is not one this sink wrote. */
export class EmbeddingOutputError extends Error {
  override readonly name = 'EmbeddingOutputError';
}

const doneKey = (id: string, provider: string, model: string) => JSON.stringify([provider, model, id]);

/**
 * Appends one JSON line per embedded record (`{id, provider, model, dimensions, embedding, text, metadata}`).
 * Opening reads what an earlier run wrote, so those ids are skipped; a last line cut short by a crash is
 * dropped (its record is embedded again) so appended lines stay well-formed.
 */
export class JsonlEmbeddingSink implements EmbeddingSink {
  private constructor(
    private readonly file: FileHandle,
    private readonly done: Set<string>,
  ) {}

  static async open(path: string): Promise<JsonlEmbeddingSink> {
    const done = new Set<string>();
    const size = await stat(path).then(
      (info) => info.size,
      () => undefined,
    );
    if (size !== undefined && size > 0) {
      const complete = await completeLength(path, size);
      if (complete < size) await truncate(path, complete);
      await readDone(path, done);
    }
    return new JsonlEmbeddingSink(await open(path, 'a'), done);
  }

  async storedIds(ids: readonly string[], provider: string, model: string): Promise<Set<string>> {
    return new Set(ids.filter((id) => this.done.has(doneKey(id, provider, model))));
  }

  async write(records: readonly EmbeddedRecord[]): Promise<void> {
    // One write per batch: concurrent batches never interleave inside a line.
    const text = records
      .map(({ id, provider, model, embedding, text, metadata }) =>
        JSON.stringify({ id, provider, model, dimensions: embedding.length, embedding, text, metadata: metadata ?? {} }),
      )
      .join('\n');
    await this.file.appendFile(`${text}\n`);
    for (const record of records) this.done.add(doneKey(record.id, record.provider, record.model));
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

/** Byte length up to and including the last newline (0 when there is none). */
async function completeLength(path: string, size: number): Promise<number> {
  const file = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(64 * 1024);
    for (let end = size; end > 0; ) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await file.read(chunk, 0, end - start, start);
      const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (newline !== -1) return start + newline + 1;
      end = start;
    }
    return 0;
  } finally {
    await file.close();
  }
}

async function readDone(path: string, done: Set<string>): Promise<void> {
  let lineNumber = 0;
  for await (const text of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    lineNumber += 1;
    record(text, lineNumber, path, done);
  }
}

function record(text: string, lineNumber: number, path: string, done: Set<string>): void {
  if (text.trim() === '') return;
  const value = parseJson(text) as { id?: unknown; provider?: unknown; model?: unknown } | null | undefined;
  if (!value || typeof value.id !== 'string' || typeof value.provider !== 'string' || typeof value.model !== 'string') {
    throw new EmbeddingOutputError(`${path}:${lineNumber}: not an embedding record written by tollgate embed; give another --out file`);
  }
  done.add(doneKey(value.id, value.provider, value.model));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Upserts into the vector store: the text as content, the line's metadata as metadata. */
export class VectorStoreEmbeddingSink implements EmbeddingSink {
  constructor(private readonly store: VectorStore) {}

  storedIds(ids: readonly string[], provider: string, model: string): Promise<Set<string>> {
    return this.store.storedIds(ids, provider, model);
  }

  write(records: readonly EmbeddedRecord[]): Promise<void> {
    return this.store.upsertMany(records.map(({ id, embedding, provider, model, text, metadata }) => ({ id, embedding, provider, model, content: text, metadata })));
  }
}
