/**
 * Embeds a JSONL corpus: lines are parsed as they are read, grouped into batches, and at most `concurrency`
 * batches are in flight (reading waits for a free slot, so memory stays bounded). Ids already in the sink
 * for the target provider and model are skipped, which makes a re-run resume. Bad lines are reported with
 * their line numbers; a batch whose transient failure outlived the client's retries is reported and the run
 * goes on, while a failure that would repeat for every batch (authentication, unknown model, store) ends it.
 */
import { ConnectionError, InvalidResponseError, ProviderError, RateLimitError, TollgateError } from '../errors';
import { type CorpusRecord, parseCorpusLine } from './corpus-line';

export interface EmbeddedRecord extends CorpusRecord {
  embedding: number[];
  provider: string;
  model: string;
}

/** Where embeddings go: a JSONL file or the vector store. */
export interface EmbeddingSink {
  /** Which of `ids` are already stored for this provider and model. */
  storedIds(ids: readonly string[], provider: string, model: string): Promise<Set<string>>;
  write(records: readonly EmbeddedRecord[]): Promise<void>;
}

export interface EmbedBatchResult {
  embeddings: number[][];
  provider: string;
  model: string;
}

export interface BadLine {
  line: number;
  problem: string;
}

export interface FailedRecord {
  line: number;
  id: string;
  error: string;
}

export interface BulkEmbedProgress {
  /** Non-blank lines handled so far (embedded, skipped, bad or failed). */
  handled: number;
  embedded: number;
  alreadyStored: number;
  bad: number;
  failed: number;
}

export interface BulkEmbedSummary extends BulkEmbedProgress {
  badLines: BadLine[];
  failedRecords: FailedRecord[];
  /** Set when a failure that would repeat for every batch ended the run early. */
  abortedBy?: string;
  /** Provider and model that answered (undefined when nothing was embedded). */
  provider?: string;
  model?: string;
  dimensions?: number;
}

export interface BulkEmbedOptions {
  lines: AsyncIterable<string>;
  embed: (texts: string[]) => Promise<EmbedBatchResult>;
  sink: EmbeddingSink;
  /** Provider and model whose stored ids count as done. */
  target: { provider: string; model: string };
  batchSize: number;
  concurrency: number;
  onBadLine?: (bad: BadLine) => void;
  onFailure?: (failed: FailedRecord[]) => void;
  onProgress?: (progress: BulkEmbedProgress) => void;
}

interface NumberedRecord extends CorpusRecord {
  line: number;
}

export async function embedCorpus(options: BulkEmbedOptions): Promise<BulkEmbedSummary> {
  const summary: BulkEmbedSummary = { handled: 0, embedded: 0, alreadyStored: 0, bad: 0, failed: 0, badLines: [], failedRecords: [] };
  const progress = () => {
    const { handled, embedded, alreadyStored, bad, failed } = summary;
    options.onProgress?.({ handled, embedded, alreadyStored, bad, failed });
  };
  const firstLineOf = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let batch: NumberedRecord[] = [];

  const runBatch = async (records: NumberedRecord[]): Promise<void> => {
    try {
      const stored = await options.sink.storedIds(
        records.map((record) => record.id),
        options.target.provider,
        options.target.model,
      );
      const pending = records.filter((record) => !stored.has(record.id));
      summary.alreadyStored += records.length - pending.length;
      if (pending.length > 0 && summary.abortedBy === undefined) {
        const result = await options.embed(pending.map((record) => record.text));
        await options.sink.write(
          pending.map(({ line: _line, ...record }, index) => ({ ...record, embedding: result.embeddings[index], provider: result.provider, model: result.model })),
        );
        summary.embedded += pending.length;
        summary.provider = result.provider;
        summary.model = result.model;
        summary.dimensions = result.embeddings[0]?.length;
      } else if (pending.length > 0) {
        fail(pending, `not attempted: ${summary.abortedBy}`);
        return;
      }
    } catch (error) {
      const message = describeFailure(error);
      if (!isTransient(error)) summary.abortedBy ??= message;
      fail(records, message);
      return;
    }
    summary.handled += records.length;
    progress();
  };

  const fail = (records: NumberedRecord[], error: string) => {
    const failed = records.map(({ line, id }) => ({ line, id, error }));
    summary.failedRecords.push(...failed);
    summary.failed += failed.length;
    summary.handled += failed.length;
    options.onFailure?.(failed);
    progress();
  };

  const dispatch = async (records: NumberedRecord[]) => {
    while (inFlight.size >= options.concurrency) await Promise.race(inFlight);
    const running = runBatch(records).finally(() => inFlight.delete(running));
    inFlight.add(running);
  };

  let lineNumber = 0;
  for await (const text of options.lines) {
    lineNumber += 1;
    if (summary.abortedBy !== undefined) break;
    if (text.trim() === '') continue;
    const parsed = parseCorpusLine(text);
    let problem = 'problem' in parsed ? parsed.problem : undefined;
    if (!('problem' in parsed)) {
      const first = firstLineOf.get(parsed.record.id);
      if (first !== undefined) problem = `duplicate id (first on line ${first})`;
      else firstLineOf.set(parsed.record.id, lineNumber);
    }
    if (problem !== undefined) {
      const bad = { line: lineNumber, problem };
      summary.badLines.push(bad);
      summary.bad += 1;
      summary.handled += 1;
      options.onBadLine?.(bad);
      progress();
      continue;
    }
    batch.push({ ...(parsed as { record: CorpusRecord }).record, line: lineNumber });
    if (batch.length >= options.batchSize) {
      await dispatch(batch);
      batch = [];
    }
  }
  if (batch.length > 0 && summary.abortedBy === undefined) await dispatch(batch);
  await Promise.all(inFlight);
  return summary;
}

/** Rate limits, connection failures, timeouts, 5xx and malformed answers may pass; anything else would repeat. */
function isTransient(error: unknown): boolean {
  return error instanceof RateLimitError || error instanceof ConnectionError || error instanceof ProviderError || error instanceof InvalidResponseError;
}

/** Tollgate's own sanitized message; never an upstream body or a driver's text. */
function describeFailure(error: unknown): string {
  return error instanceof TollgateError ? `${error.type}: ${error.message}` : 'internal_error: unexpected failure';
}
