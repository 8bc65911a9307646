/**
 * The rules every JSON document source shares, as pure functions: a source is one JSON value, either an
 * array of documents or a single document; a document is an object or a string; count and size are bounded.
 */
import { isObject } from '../../common/json-values';
import { InvalidRequestError } from '../errors';
import type { ContextItem } from '../prompts/context-rendering';
import type { DocumentBounds } from './document-source.interface';

/** Refuses `byteLength` over the bound before anything is parsed. */
export function checkSourceSize(byteLength: number, bounds: DocumentBounds, label: string): void {
  if (byteLength > bounds.maxBytes) {
    throw new InvalidRequestError(`${label}: ${byteLength} bytes is more than the ${bounds.maxBytes}-byte limit for document sources`);
  }
}

/** Parses a source's text; the parser's own message is not repeated (it may quote the content). */
export function parseJsonDocuments(text: string, bounds: DocumentBounds, label: string): ContextItem[] {
  checkSourceSize(Buffer.byteLength(text, 'utf8'), bounds, label);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidRequestError(`${label}: is not valid JSON`);
  }
  return checkDocuments(value, bounds, label);
}

/** An array of objects or strings, or one object; at most `maxDocuments`. */
export function checkDocuments(value: unknown, bounds: DocumentBounds, label: string): ContextItem[] {
  const documents = Array.isArray(value) ? value : [value];
  if (!Array.isArray(value) && !isObject(value)) {
    throw new InvalidRequestError(`${label}: must be a JSON array of documents (objects or strings) or a single JSON object`);
  }
  if (documents.length > bounds.maxDocuments) {
    throw new InvalidRequestError(`${label}: holds ${documents.length} documents, more than the limit of ${bounds.maxDocuments}`);
  }
  documents.forEach((document, index) => {
    if (typeof document === 'string') {
      if (document.trim() === '') throw new InvalidRequestError(`${label}[${index}]: must not be an empty string`);
      return;
    }
    if (!isObject(document)) throw new InvalidRequestError(`${label}[${index}]: must be an object or a string`);
  });
  return documents as ContextItem[];
}
