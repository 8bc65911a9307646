import { open } from 'node:fs/promises';
import { InvalidRequestError } from '../errors';
import type { ContextItem } from '../prompts/context-rendering';
import { DocumentSourceError } from './document-errors';
import { DEFAULT_DOCUMENT_BOUNDS, type DocumentBounds, type DocumentSource } from './document-source.interface';
import { checkSourceSize, parseJsonDocuments } from './json-documents';

/**
 * A local JSON file. The size is checked on the open file before it is read, so an oversized file costs
 * nothing; messages name the label (e.g. `--json-file`) and the error code, never the content.
 */
export class FileDocumentSource implements DocumentSource {
  constructor(
    private readonly path: string,
    readonly label = 'documents file',
    private readonly bounds: DocumentBounds = DEFAULT_DOCUMENT_BOUNDS,
  ) {}

  async load(): Promise<ContextItem[]> {
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') throw new InvalidRequestError(`${this.label}: ${this.path}: no such file`);
      throw new DocumentSourceError(`${this.label}: ${this.path}: cannot be read (${code ?? 'error'})`);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new InvalidRequestError(`${this.label}: ${this.path}: is not a regular file`);
      checkSourceSize(stats.size, this.bounds, this.label);
      const text = await handle.readFile({ encoding: 'utf8' });
      return parseJsonDocuments(text, this.bounds, this.label);
    } catch (error) {
      if (error instanceof InvalidRequestError) throw error;
      throw new DocumentSourceError(`${this.label}: ${this.path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    } finally {
      await handle.close();
    }
  }
}
