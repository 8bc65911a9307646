import { InvalidRequestError } from '../errors';
import { createPgExecutor } from './pg-executor';
import { createPgliteExecutor } from './pglite-executor';
import { DEFAULT_VECTOR_TABLE, PgVectorStore, type PgVectorStoreOptions } from './pgvector-store';
import type { SqlExecutor } from './sql-executor';
import { VectorStoreError } from './vector-errors';
import type { VectorStoreSettings } from './vector-store.interface';
import { checkDimensions, checkMetric, checkTableName } from './vector-validation';

/** The configured backend: PGlite (embedded, the default) or a PostgreSQL server with pgvector. */
export async function createVectorStore(settings: VectorStoreSettings): Promise<PgVectorStore> {
  // Refused options must not cost a database start.
  checkTableName(settings.table ?? DEFAULT_VECTOR_TABLE);
  if (settings.metric !== undefined) checkMetric(settings.metric);
  if (settings.dimensions !== undefined) checkDimensions(settings.dimensions);
  const options = { table: settings.table, dimensions: settings.dimensions, metric: settings.metric, maxLimit: settings.maxLimit };
  if (settings.backend === 'postgres') {
    if (settings.url === undefined) throw new InvalidRequestError('vector.url is required for the postgres backend');
    return storeOn(createPgExecutor(settings.url), { ...options, backend: 'PostgreSQL' });
  }
  let executor: SqlExecutor;
  try {
    executor = await createPgliteExecutor(settings.dataDir);
  } catch {
    throw new VectorStoreError(`PGlite: could not open the database${settings.dataDir ? ` in ${settings.dataDir}` : ''}`);
  }
  return storeOn(executor, { ...options, backend: 'PGlite' });
}

/** The store's constructor checks the options again (for direct users); when it refuses, the connection is released. */
async function storeOn(executor: SqlExecutor, options: PgVectorStoreOptions): Promise<PgVectorStore> {
  try {
    return new PgVectorStore(executor, options);
  } catch (error) {
    await executor.close();
    throw error;
  }
}
