import { InvalidRequestError } from '../errors';
import type { ContextItem } from '../prompts/context-rendering';
import { DocumentSourceError } from './document-errors';
import { DEFAULT_DOCUMENT_BOUNDS, type DocumentBounds, type DocumentSource, type KeyValueReader } from './document-source.interface';
import { checkSourceSize, parseJsonDocuments } from './json-documents';

const MAX_KEY_CHARS = 1024;

/**
 * One key of a key-value store (Redis) holding a JSON document source, read through a client the caller
 * owns and injects: Tollgate neither connects nor closes it. A client failure becomes a DocumentSourceError
 * naming the key, never the store's address or message.
 */
export class KeyValueDocumentSource implements DocumentSource {
  readonly label: string;

  constructor(
    private readonly client: KeyValueReader,
    private readonly key: string,
    private readonly bounds: DocumentBounds = DEFAULT_DOCUMENT_BOUNDS,
  ) {
    if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_CHARS) {
      throw new InvalidRequestError(`document key must be a non-empty string of at most ${MAX_KEY_CHARS} characters`);
    }
    this.label = `key "${key}"`;
  }

  async load(): Promise<ContextItem[]> {
    if (this.client.strLen) {
      checkSourceSize(await this.read(() => this.client.strLen!(this.key)), this.bounds, this.label);
    }
    const value = await this.read(() => this.client.get(this.key));
    if (value === null || value === undefined) throw new DocumentSourceError(`${this.label}: not found in the document store`);
    const text = typeof value === 'string' ? value : value.toString('utf8');
    return parseJsonDocuments(text, this.bounds, this.label);
  }

  private async read<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch {
      throw new DocumentSourceError(`${this.label}: the document store could not be read`);
    }
  }
}
