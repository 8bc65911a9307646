import { DocumentSourceError } from '../ai/documents/document-errors';
import { InvalidRequestError, UnknownProviderError } from '../common/errors';
import { OperationError, UsageError } from './cli.errors';

/**
 * Gateway errors that mean "the invocation is wrong" (a bad query, limit, tool or document file) become
 * usage errors (exit 2); a document source that cannot be read is an operation error (exit 1). Everything
 * else passes through unchanged (upstream failures are exit 1 with Tollgate's own message).
 */
export function toCliError(error: unknown): unknown {
  if (error instanceof InvalidRequestError || error instanceof UnknownProviderError) return new UsageError(error.message);
  if (error instanceof DocumentSourceError) return new OperationError([error.message]);
  return error;
}
