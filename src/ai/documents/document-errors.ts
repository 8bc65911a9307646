import { TollgateError } from '../errors';

/**
 * A document source could not be read (a file that cannot be opened, a store that does not answer, a key
 * that holds nothing). Bad content is an InvalidRequestError instead: the caller can fix that one.
 */
export class DocumentSourceError extends TollgateError {
  override readonly type: string = 'document_source_unavailable';
}
