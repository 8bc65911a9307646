import { TollgateError } from '../errors';

/**
 * The vector backend failed or is not set up (no `vector` extension, table missing or of another dimension,
 * database unreachable). Messages name tables and SQLSTATE codes, never database messages or hosts.
 */
export class VectorStoreError extends TollgateError {
  override readonly type: string = 'vector_store_error';
}
