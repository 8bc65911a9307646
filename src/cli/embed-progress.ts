import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import type { BulkEmbedProgress } from '../ai/bulk-embedding/bulk-embedder';

/** Progress of `tollgate embed --file` on stderr, and the messages that must not break it. */
export interface EmbedProgressReporter {
  update(progress: BulkEmbedProgress): void;
  /** A whole line of text (a bad line, a failed batch). */
  message(text: string): void;
  stop(): void;
}

/** A bar redrawn in place on a terminal (cli-progress); messages are printed above it. */
export function terminalProgress(total: number, stream: NodeJS.WriteStream = process.stderr): EmbedProgressReporter {
  const bars = new MultiBar(
    {
      stream,
      format: 'embedding [{bar}] {percentage}% | {value}/{total} lines | embedded {embedded} | already stored {alreadyStored} | bad {bad} | failed {failed} | eta {eta_formatted}',
      hideCursor: true,
      clearOnComplete: false,
    },
    Presets.shades_classic,
  );
  const bar: SingleBar = bars.create(total, 0, { embedded: 0, alreadyStored: 0, bad: 0, failed: 0 });
  return {
    update: ({ handled, ...counts }) => bar.update(handled, counts),
    message: (text) => bars.log(`${text}\n`),
    stop: () => {
      // MultiBar prints logged lines on its next redraw; one more redraw keeps the last ones.
      bars.update();
      bars.stop();
    },
  };
}

/** Plain lines for logs and pipes: at most one per `intervalMs`, and always the last one. */
export function lineProgress(total: number, write: (text: string) => void, intervalMs = 1000, now: () => number = Date.now): EmbedProgressReporter {
  let last: BulkEmbedProgress | undefined;
  let printedAt = -Infinity;
  let printed: BulkEmbedProgress | undefined;
  const print = (progress: BulkEmbedProgress) => {
    const percent = total === 0 ? 100 : Math.floor((progress.handled / total) * 100);
    write(
      `progress: ${progress.handled}/${total} lines (${percent}%), embedded ${progress.embedded}, already stored ${progress.alreadyStored}, ` +
        `bad ${progress.bad}, failed ${progress.failed}\n`,
    );
    printed = progress;
    printedAt = now();
  };
  return {
    update: (progress) => {
      last = progress;
      if (progress.handled === total || now() - printedAt >= intervalMs) print(progress);
    },
    message: (text) => write(`${text}\n`),
    stop: () => {
      if (last && last !== printed) print(last);
    },
  };
}
