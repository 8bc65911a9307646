import type { ContextItem } from '../prompts/context-rendering';
import { DEFAULT_DOCUMENT_BOUNDS, type DocumentBounds, type DocumentSource } from './document-source.interface';
import { checkDocuments, checkSourceSize } from './json-documents';

/** Documents already in memory (a request body, a host app's data); their size is measured as JSON. */
export class MemoryDocumentSource implements DocumentSource {
  constructor(
    private readonly documents: unknown,
    readonly label = 'documents',
    private readonly bounds: DocumentBounds = DEFAULT_DOCUMENT_BOUNDS,
  ) {}

  async load(): Promise<ContextItem[]> {
    const items = checkDocuments(this.documents, this.bounds, this.label);
    checkSourceSize(Buffer.byteLength(JSON.stringify(this.documents), 'utf8'), this.bounds, this.label);
    return items;
  }
}
