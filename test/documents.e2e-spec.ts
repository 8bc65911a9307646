/**
 * JSON document sources: a local file, in-memory documents, and a key in the real Redis on loopback read
 * through an injected node-redis client (a unique key prefix per run). Bounds, shapes and failures.
 */
import { createClient } from '@keyv/redis';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocumentSourceError } from '../src/ai/documents/document-errors';
import type { DocumentSource } from '../src/ai/documents/document-source.interface';
import { FileDocumentSource } from '../src/ai/documents/file-document-source';
import { KeyValueDocumentSource } from '../src/ai/documents/key-value-document-source';
import { MemoryDocumentSource } from '../src/ai/documents/memory-document-source';
import { InvalidRequestError, TollgateError } from '../src/ai/errors';

const REDIS_URL = process.env.TOLLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `tollgate-test:documents:${randomUUID()}:`;
const SMALL = { maxDocuments: 3, maxBytes: 200 };

let work: string;
let redis: ReturnType<typeof createClient>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tollgate-documents-'));
  redis = createClient({ url: REDIS_URL });
  await redis.connect();
});

afterAll(async () => {
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length) await redis.del(keys);
  await redis.quit();
  rmSync(work, { recursive: true, force: true });
});

async function failure(source: DocumentSource): Promise<TollgateError> {
  const error = await source.load().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TollgateError);
  return error as TollgateError;
}

function file(name: string, text: string): string {
  const path = join(work, name);
  writeFileSync(path, text);
  return path;
}

describe('FileDocumentSource', () => {
  it('reads an array of objects and strings, or a single object, as context items', async () => {
    const docs = [{ title: 'A', body: 'alpha' }, 'plain text'];
    expect(await new FileDocumentSource(file('docs.json', JSON.stringify(docs)), '--json-file').load()).toEqual(docs);
    expect(await new FileDocumentSource(file('one.json', '{"title":"only"}'), '--json-file').load()).toEqual([{ title: 'only' }]);
  });

  it('refuses too many documents, too many bytes (before reading), bad JSON and bad shapes, naming the label', async () => {
    const cases: Array<[string, string]> = [
      ['[1,2]', '--json-file[0]: must be an object or a string'],
      ['["a","b","c","d"]', '--json-file: holds 4 documents, more than the limit of 3'],
      [JSON.stringify([{ text: 'x'.repeat(300) }]), '--json-file: 313 bytes is more than the 200-byte limit for document sources'],
      ['{"title": ', '--json-file: is not valid JSON'],
      ['"just a string"', '--json-file: must be a JSON array of documents (objects or strings) or a single JSON object'],
      ['[""]', '--json-file[0]: must not be an empty string'],
      ['[null]', '--json-file[0]: must be an object or a string'],
    ];
    for (const [text, message] of cases) {
      const error = await failure(new FileDocumentSource(file('bad.json', text), '--json-file', SMALL));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(error.message).toBe(message);
    }
  });

  it('a missing file is a bad argument; an unreadable one a source failure', async () => {
    const missing = await failure(new FileDocumentSource(join(work, 'nope.json'), '--json-file'));
    expect(missing).toBeInstanceOf(InvalidRequestError);
    expect(missing.message).toBe(`--json-file: ${join(work, 'nope.json')}: no such file`);
    expect((await failure(new FileDocumentSource(work, '--json-file'))).message).toMatch(/no such file|is not a regular file/);
    if (process.getuid?.() === 0) return; // root reads any file; the permission case cannot happen
    const locked = file('locked.json', '[]');
    chmodSync(locked, 0);
    const unreadable = await failure(new FileDocumentSource(locked, '--json-file'));
    expect(unreadable).toBeInstanceOf(DocumentSourceError);
    expect(unreadable.message).toBe(`--json-file: ${locked}: cannot be read (EACCES)`);
  });
});

describe('MemoryDocumentSource', () => {
  it('checks count, shape and size as JSON', async () => {
    expect(await new MemoryDocumentSource([{ a: 1 }, 'b'], 'documents', SMALL).load()).toEqual([{ a: 1 }, 'b']);
    expect((await failure(new MemoryDocumentSource([{}, {}, {}, {}], 'documents', SMALL))).message).toBe('documents: holds 4 documents, more than the limit of 3');
    expect((await failure(new MemoryDocumentSource([{ t: 'é'.repeat(100) }], 'documents', SMALL))).message).toBe(
      'documents: 210 bytes is more than the 200-byte limit for document sources',
    );
    expect((await failure(new MemoryDocumentSource([['nested']], 'documents', SMALL))).message).toBe('documents[0]: must be an object or a string');
  });
});

describe('KeyValueDocumentSource on Redis', () => {
  it('reads a JSON array stored under a key through the injected client', async () => {
    const docs = [{ title: 'Redis doc', body: 'from the store' }, 'second'];
    await redis.set(`${PREFIX}ok`, JSON.stringify(docs));
    expect(await new KeyValueDocumentSource(redis, `${PREFIX}ok`).load()).toEqual(docs);
  });

  it('refuses an oversized value by its length, before reading it', async () => {
    await redis.set(`${PREFIX}big`, JSON.stringify(['x'.repeat(500)]));
    let reads = 0;
    const counting = { get: (key: string) => (reads++, redis.get(key)), strLen: (key: string) => redis.strLen(key) };
    const error = await failure(new KeyValueDocumentSource(counting, `${PREFIX}big`, SMALL));
    expect(error.message).toBe(`key "${PREFIX}big": 504 bytes is more than the 200-byte limit for document sources`);
    expect(reads).toBe(0);
  });

  it('a client without strLen is still bounded, after the read', async () => {
    await redis.set(`${PREFIX}big2`, JSON.stringify(['x'.repeat(500)]));
    const error = await failure(new KeyValueDocumentSource({ get: (key) => redis.get(key) }, `${PREFIX}big2`, SMALL));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toContain('504 bytes');
  });

  it('invalid JSON and too many documents are invalid requests; a missing key is a source failure', async () => {
    await redis.set(`${PREFIX}bad`, '{oops');
    await redis.set(`${PREFIX}many`, JSON.stringify(['a', 'b', 'c', 'd']));
    expect((await failure(new KeyValueDocumentSource(redis, `${PREFIX}bad`, SMALL))).message).toBe(`key "${PREFIX}bad": is not valid JSON`);
    expect((await failure(new KeyValueDocumentSource(redis, `${PREFIX}many`, SMALL))).message).toContain('holds 4 documents');
    const missing = await failure(new KeyValueDocumentSource(redis, `${PREFIX}absent`));
    expect(missing).toBeInstanceOf(DocumentSourceError);
    expect(missing.message).toBe(`key "${PREFIX}absent": not found in the document store`);
  });

  it('a store that fails is a source failure without the client\'s message or address', async () => {
    const closed = createClient({ url: REDIS_URL });
    await closed.connect();
    await closed.quit();
    const error = await failure(new KeyValueDocumentSource(closed, `${PREFIX}ok`));
    expect(error).toBeInstanceOf(DocumentSourceError);
    expect(error.message).toBe(`key "${PREFIX}ok": the document store could not be read`);
    expect(() => new KeyValueDocumentSource(redis, '')).toThrow('document key must be a non-empty string of at most 1024 characters');
  });
});
