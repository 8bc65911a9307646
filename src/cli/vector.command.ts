import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import { VECTOR_METRICS, type VectorMatch, type VectorMetric } from '../ai/vector/vector-store.interface';
import { writeJson } from './ai-command.base';
import { UsageError } from './cli.errors';
import { positiveInteger, VectorStoreCommand, type VectorStoreOptions } from './vector-store-command.base';

interface VectorOptions extends VectorStoreOptions {
  index?: boolean;
  embedding?: number[];
  embed?: string;
  content?: string;
  metadata?: Record<string, unknown>;
  limit?: number;
}

/** Label of records whose embedding was given with --embedding rather than made by the gateway. */
const EXTERNAL = 'external';

/** Shared by `vector install|upsert|search`: the store flags, `--metric`, and `--embed TEXT` through the gateway. */
abstract class VectorSubCommandBase extends VectorStoreCommand {
  @Option({ flags: '--metric <metric>', description: `${VECTOR_METRICS.join(', ')} (vector.metric; default cosine)` })
  parseMetric(value: string): VectorMetric {
    if (!(VECTOR_METRICS as readonly string[]).includes(value)) {
      throw new UsageError(`--metric must be one of ${VECTOR_METRICS.join(', ')} (got "${value}")`);
    }
    return value as VectorMetric;
  }

  /** The vector and its origin: from --embedding as given, or from --embed TEXT through the gateway. */
  protected async vectorOf(options: VectorOptions): Promise<{ embedding: number[]; provider?: string; model?: string; text?: string }> {
    if ((options.embedding === undefined) === (options.embed === undefined)) {
      throw new UsageError(`${this.command.name()}: give exactly one of --embedding JSON or --embed TEXT`);
    }
    if (options.embedding !== undefined) return { embedding: options.embedding, provider: options.provider, model: options.model };
    const text = options.embed as string;
    const result = await this.withClient(options, (client, provider) =>
      client.generateEmbedding(text, { provider, model: options.model, enableFallback: options.fallback }),
    );
    return { embedding: result.embedding, provider: result.provider, model: result.model, text };
  }

  @Option({ flags: '--embedding <json>', description: 'the vector as a JSON array of numbers' })
  parseEmbedding(value: string): number[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new UsageError('--embedding must be a JSON array of numbers');
    }
    if (!Array.isArray(parsed)) throw new UsageError('--embedding must be a JSON array of numbers');
    return parsed as number[];
  }

  @Option({ flags: '--embed <text>', description: 'embed TEXT through the gateway first (uses --provider, --model)' })
  parseEmbed(value: string): string {
    if (value.trim() === '') throw new UsageError('--embed must not be empty');
    return value;
  }
}

@SubCommand({ name: 'install', description: 'Create the vector extension (when allowed), the table and an HNSW index for the metric' })
export class VectorInstallCommand extends VectorSubCommandBase {
  @Option({ flags: '--no-index', description: 'create no HNSW index (needed above 2000 dimensions)' })
  parseNoIndex(): boolean {
    return false;
  }

  async run(_params: string[], options: VectorOptions = {}): Promise<void> {
    await this.withStore(options, async (store) => {
      await store.install();
      if (options.index !== false) await store.createIndex();
      const info = store.info();
      process.stdout.write(
        `installed table ${info.table} (${info.dimensions} dimensions) on ${info.backend}` +
          `${options.index !== false ? ` with a ${info.metric} HNSW index` : ''}\n`,
      );
    });
  }
}

@SubCommand({ name: 'upsert', arguments: '<id>', description: 'Insert or replace the vector of ID (from --embedding JSON, or --embed TEXT)' })
export class VectorUpsertCommand extends VectorSubCommandBase {
  @Option({ flags: '--content <text>', description: 'text stored with the vector (default: the --embed text)' })
  parseContent(value: string): string {
    return value;
  }

  @Option({ flags: '--metadata <json>', description: 'a JSON object stored with the vector' })
  parseMetadata(value: string): Record<string, unknown> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new UsageError('--metadata must be a JSON object');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--metadata must be a JSON object');
    return parsed as Record<string, unknown>;
  }

  async run([id]: string[], options: VectorOptions = {}): Promise<void> {
    const { embedding, provider, model, text } = await this.vectorOf(options);
    const record = { id, embedding, provider: provider ?? EXTERNAL, model: model ?? EXTERNAL, content: options.content ?? text, metadata: options.metadata };
    await this.withStore(options, (store) => store.upsert(record));
    if (options.format === 'json') writeJson({ id, provider: record.provider, model: record.model, dimensions: embedding.length });
    else process.stdout.write(`upserted ${id} (${embedding.length} dimensions, ${record.provider}/${record.model})\n`);
  }
}

@SubCommand({ name: 'search', description: 'Nearest vectors to --embedding JSON, or to --embed TEXT (then only vectors of that provider and model)' })
export class VectorSearchCommand extends VectorSubCommandBase {
  @Option({ flags: '--limit <n>', description: 'number of matches (default 10, at most vector.max_limit)' })
  parseLimit(value: string): number {
    return positiveInteger(value, '--limit');
  }

  async run(_params: string[], options: VectorOptions = {}): Promise<void> {
    const { embedding, provider, model } = await this.vectorOf(options);
    const matches = await this.withStore(options, (store) => store.search({ embedding, limit: options.limit, metric: options.metric, provider, model }));
    if (options.format === 'json') writeJson(snakeCaseKeys({ matches, count: matches.length }));
    else process.stdout.write(formatMatches(matches));
  }
}

@Command({
  name: 'vector',
  description: 'Vector store on pgvector (PGlite embedded by default, or PostgreSQL): install, upsert, search',
  subCommands: [VectorInstallCommand, VectorUpsertCommand, VectorSearchCommand],
})
export class VectorCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp({ error: true });
    throw new UsageError('vector: missing subcommand (install, upsert, search)');
  }
}

function formatMatches(matches: readonly VectorMatch[]): string {
  if (matches.length === 0) return 'No matches.\n';
  return matches
    .map((match, index) => {
      const content = match.content.length > 80 ? `${match.content.slice(0, 79)}…` : match.content;
      return `${index + 1}. ${match.id}  score ${match.score.toFixed(4)}  ${match.provider}/${match.model}${content ? `  ${content}` : ''}\n`;
    })
    .join('');
}
