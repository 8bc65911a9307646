import { resolve } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Option } from 'nest-commander';
import type { PgVectorStore } from '../ai/vector/pgvector-store';
import { createVectorStore } from '../ai/vector/vector-store.factory';
import type { VectorMetric } from '../ai/vector/vector-store.interface';
import { checkTableName } from '../ai/vector/vector-validation';
import type { ConfigOverride } from '../config/config.types';
import { AiCommand, type AiCommandOptions } from './ai-command.base';
import { UsageError } from './cli.errors';
import { toCliError } from './cli-input-errors';

export interface VectorStoreOptions extends AiCommandOptions {
  backend?: 'pglite' | 'postgres';
  url?: string;
  dataDir?: string;
  table?: string;
  dimensions?: number;
  metric?: VectorMetric;
}

/**
 * Commands that open the vector store (`vector install|upsert|search`, `embed --into-vector-store`): where
 * it is (the `vector:` section, with these flags on top), on top of the AI command options.
 */
@Injectable()
export abstract class VectorStoreCommand extends AiCommand {
  @Option({ flags: '--backend <name>', description: 'vector store: pglite (embedded, default) or postgres' })
  parseBackend(value: string): 'pglite' | 'postgres' {
    if (value !== 'pglite' && value !== 'postgres') throw new UsageError(`--backend must be one of pglite, postgres (got "${value}")`);
    return value;
  }

  @Option({ flags: '--url <url>', description: 'vector store, postgres: connection URL (vector.url)' })
  parseUrl(value: string): string {
    return value;
  }

  @Option({ flags: '--data-dir <path>', description: 'vector store, pglite: data directory (vector.data_dir; default .tollgate/vector)' })
  parseDataDir(value: string): string {
    return value;
  }

  @Option({ flags: '--table <name>', description: 'table holding the vectors (vector.table; default tollgate_vectors)' })
  parseTable(value: string): string {
    try {
      return checkTableName(value);
    } catch {
      throw new UsageError(`--table must be a lower-case SQL identifier (a-z, digits, underscore; at most 40 characters), got "${value}"`);
    }
  }

  @Option({ flags: '--dimensions <n>', description: 'exact embedding length (vector.dimensions)' })
  parseDimensions(value: string): number {
    return positiveInteger(value, '--dimensions');
  }

  /** Opens the configured store with the flags applied, runs `use`, and closes it; bad input exits 2. */
  protected async withStore<T>(options: VectorStoreOptions, use: (store: PgVectorStore) => Promise<T>): Promise<T> {
    const overrides: ConfigOverride[] = [];
    const flag = (source: string, key: string, value: unknown) => {
      if (value !== undefined) overrides.push({ source, path: ['vector', key], value });
    };
    flag('--backend', 'backend', options.backend);
    flag('--url', 'url', options.url);
    // Relative to where the command runs, not to the configuration file.
    flag('--data-dir', 'data_dir', options.dataDir === undefined ? undefined : resolve(options.dataDir));
    flag('--table', 'table', options.table);
    flag('--dimensions', 'dimensions', options.dimensions);
    flag('--metric', 'metric', options.metric);
    const { vector } = this.configs.load(this.command, overrides);
    let store: PgVectorStore | undefined;
    try {
      store = await createVectorStore(vector);
      return await use(store);
    } catch (error) {
      throw toCliError(error);
    } finally {
      await store?.close();
    }
  }
}

export function positiveInteger(value: string, flag: string): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1) throw new UsageError(`${flag} must be a positive integer (got "${value}")`);
  return Number(value);
}
