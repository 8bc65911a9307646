import { createReadStream } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { Command, Option } from 'nest-commander';
import { type BulkEmbedSummary, type EmbeddingSink, embedCorpus } from '../ai/bulk-embedding/bulk-embedder';
import { EmbeddingOutputError, JsonlEmbeddingSink, VectorStoreEmbeddingSink } from '../ai/bulk-embedding/embedding-sinks';
import type { AiClient } from '../ai/client/ai-client';
import { snakeCaseKeys } from '../ai/http/api-response';
import { inputText, writeJson } from './ai-command.base';
import { OperationError, UsageError } from './cli.errors';
import { type EmbedProgressReporter, lineProgress, terminalProgress } from './embed-progress';
import { positiveInteger, VectorStoreCommand, type VectorStoreOptions } from './vector-store-command.base';

interface EmbedOptions extends VectorStoreOptions {
  file?: string;
  intoVectorStore?: boolean;
  out?: string;
  concurrency?: number;
  batchSize?: number;
}

const DEFAULT_CONCURRENCY = 4;
const MAX_CONCURRENCY = 64;

/**
 * `tollgate embed [TEXT]`: the same embedding as POST /v1/embeddings. With `--file corpus.jsonl` it embeds a
 * whole corpus in batches into the vector store or an output JSONL, resuming where an earlier run stopped.
 */
@Command({
  name: 'embed',
  arguments: '[text]',
  description:
    'Print the embedding of TEXT (or stdin when TEXT is omitted and stdin is not a terminal); ' +
    'with --file, embed a JSONL corpus ({"id","text","metadata"} per line) into the vector store or --out FILE',
})
export class EmbedCommand extends VectorStoreCommand {
  @Option({ flags: '--no-fallback', description: 'do not try other providers when this one fails (--file never falls back)' })
  parseNoFallback(): boolean {
    return false;
  }

  @Option({ flags: '--file <path>', description: 'JSONL corpus to embed, one {"id","text","metadata"} object per line' })
  parseFile(value: string): string {
    return value;
  }

  @Option({ flags: '--into-vector-store', description: 'with --file: upsert into the vector store (install the table first: tollgate vector install)' })
  parseIntoVectorStore(): boolean {
    return true;
  }

  @Option({ flags: '--out <path>', description: 'with --file: append results to this JSONL file (re-runs skip the ids it holds)' })
  parseOut(value: string): string {
    if (value.trim() === '') throw new UsageError('--out must not be empty');
    return value;
  }

  @Option({ flags: '--concurrency <n>', description: `with --file: batches in flight at once (1 to ${MAX_CONCURRENCY}, default ${DEFAULT_CONCURRENCY})` })
  parseConcurrency(value: string): number {
    const concurrency = positiveInteger(value, '--concurrency');
    if (concurrency > MAX_CONCURRENCY) throw new UsageError(`--concurrency must be at most ${MAX_CONCURRENCY} (got ${concurrency})`);
    return concurrency;
  }

  @Option({ flags: '--batch-size <n>', description: 'with --file: texts per upstream call (1 to ai.max_batch_inputs, default that limit)' })
  parseBatchSize(value: string): number {
    return positiveInteger(value, '--batch-size');
  }

  async run([argument]: string[], options: EmbedOptions = {}): Promise<void> {
    if (options.file !== undefined) {
      if (argument !== undefined) throw new UsageError('embed: give TEXT or --file, not both');
      return this.embedFile(options.file, options);
    }
    const fileOnly = (['intoVectorStore', 'out', 'concurrency', 'batchSize'] as const).find((key) => options[key] !== undefined);
    if (fileOnly !== undefined) throw new UsageError(`embed: ${flagName(fileOnly)} needs --file`);
    const text = await inputText(argument, 'embed');
    const result = await this.withClient(options, (client, provider) =>
      client.generateEmbedding(text, { provider, model: options.model, enableFallback: options.fallback }),
    );
    // Text format: the vector alone, one JSON array on one line, ready for a pipe.
    if (options.format === 'json') writeJson(snakeCaseKeys({ ...result }));
    else process.stdout.write(`${JSON.stringify(result.embedding)}\n`);
  }

  private async embedFile(file: string, options: EmbedOptions): Promise<void> {
    if ((options.intoVectorStore === true) === (options.out !== undefined)) {
      throw new UsageError('embed --file: give exactly one of --into-vector-store or --out FILE');
    }
    const maxBatch = this.configs.load(this.command).ai.maxBatchInputs;
    const batchSize = options.batchSize ?? maxBatch;
    if (batchSize > maxBatch) throw new UsageError(`--batch-size must be at most ai.max_batch_inputs (${maxBatch}), got ${batchSize}`);
    const total = await countRecordLines(file);
    const started = Date.now();
    const run = (sink: EmbeddingSink) =>
      this.withClient(options, (client, provider) => this.embedInto(sink, client, provider ?? client.defaultProvider, file, total, batchSize, options));
    let summary: BulkEmbedSummary;
    let destination: string;
    if (options.intoVectorStore) {
      ({ summary, destination } = await this.withStore(options, async (store) => {
        // A missing table is reported before any provider call.
        await store.checkInstalled();
        const { table } = store.info();
        return { summary: await run(new VectorStoreEmbeddingSink(store)), destination: `vector store table ${table}` };
      }));
    } else {
      const out = options.out as string;
      const sink = await openOutput(out);
      try {
        summary = await run(sink);
      } finally {
        await sink.close();
      }
      destination = out;
    }
    report(summary, destination, Date.now() - started, options.format === 'json');
    const problems: string[] = [];
    if (summary.abortedBy !== undefined) problems.push(`stopped early: ${summary.abortedBy}`);
    if (summary.bad > 0 || summary.failed > 0) problems.push(`${summary.bad} bad lines skipped, ${summary.failed} records not embedded; fix them and run again to resume`);
    if (problems.length > 0) throw new OperationError(problems);
  }

  private async embedInto(
    sink: EmbeddingSink,
    client: AiClient,
    provider: string,
    file: string,
    total: number,
    batchSize: number,
    options: EmbedOptions,
  ): Promise<BulkEmbedSummary> {
    const model = options.model ?? embeddingModelOf(client, provider);
    const progress: EmbedProgressReporter = process.stderr.isTTY
      ? terminalProgress(total)
      : lineProgress(total, (text) => process.stderr.write(text));
    const name = basename(file);
    try {
      return await embedCorpus({
        lines: createInterface({ input: createReadStream(file), crlfDelay: Infinity }),
        // One model for the whole corpus: a fallback would mix vector spaces, so it never applies here.
        embed: (texts) => client.generateEmbeddings(texts, { provider, model: options.model, enableFallback: false }),
        sink,
        target: { provider, model },
        batchSize,
        concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
        onBadLine: ({ line, problem }) => progress.message(`tollgate: ${name}:${line}: ${problem} (skipped)`),
        onFailure: (failed) =>
          progress.message(`tollgate: ${name}: lines ${failed.map(({ line }) => line).join(', ')} not embedded: ${failed[0].error}`),
        onProgress: (counts) => progress.update(counts),
      });
    } finally {
      progress.stop();
    }
  }
}

const FLAG_NAMES = { intoVectorStore: '--into-vector-store', out: '--out', concurrency: '--concurrency', batchSize: '--batch-size' };

function flagName(key: keyof typeof FLAG_NAMES): string {
  return FLAG_NAMES[key];
}

/** The model the provider embeds with when no --model is given; resumption looks for records of it. */
function embeddingModelOf(client: AiClient, provider: string): string {
  const described = client.describeProviders().find((entry) => entry.name === provider);
  const model = described?.embeddingModel;
  if (typeof model !== 'string' || model === '') throw new UsageError(`embed --file: provider '${provider}' has no embedding model; give --model`);
  return model;
}

/** Non-blank lines, for the progress total; an unreadable file is a usage error naming it. */
async function countRecordLines(file: string): Promise<number> {
  try {
    await access(file, constants.R_OK);
    if (!(await stat(file)).isFile()) throw new Error('not a file');
  } catch {
    throw new UsageError(`--file: cannot read ${file}`);
  }
  let count = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line.trim() !== '') count += 1;
  }
  return count;
}

async function openOutput(out: string): Promise<JsonlEmbeddingSink> {
  try {
    return await JsonlEmbeddingSink.open(out);
  } catch (error) {
    if (error instanceof EmbeddingOutputError) throw new UsageError(error.message);
    throw new UsageError(`--out: cannot write ${out} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function report(summary: BulkEmbedSummary, destination: string, durationMs: number, json: boolean): void {
  if (json) {
    const { handled, embedded, alreadyStored, bad, failed, badLines, failedRecords, abortedBy, provider, model, dimensions } = summary;
    writeJson(
      snakeCaseKeys({
        lines: handled,
        embedded,
        alreadyStored,
        bad,
        failed,
        badLines,
        failedRecords,
        ...(abortedBy !== undefined ? { abortedBy } : {}),
        provider,
        model,
        dimensions,
        destination,
        durationMs,
      }),
    );
    return;
  }
  const origin = summary.provider ? ` with ${summary.provider}/${summary.model} (${summary.dimensions} dimensions)` : '';
  process.stdout.write(
    `${summary.handled} lines: embedded ${summary.embedded}, already stored ${summary.alreadyStored}, bad ${summary.bad}, failed ${summary.failed}` +
      `${origin} into ${destination} in ${(durationMs / 1000).toFixed(1)} s\n`,
  );
}
