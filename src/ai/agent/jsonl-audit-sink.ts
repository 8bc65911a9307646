import { open, type FileHandle } from 'node:fs/promises';
import { snakeCaseKeys } from '../http/api-response';
import type { AgentTelemetryEvent } from './agent-telemetry';

/**
 * Opt-in JSONL audit log (`agent.audit_log: path`): one line per agent event. Every line is written by one
 * append-mode write through one queue, so concurrent runs in this process never interleave, and
 * O_APPEND keeps other processes' whole lines apart as well.
 */
export class JsonlAuditSink {
  private handle?: Promise<FileHandle>;
  private queue: Promise<void> = Promise.resolve();
  private failures = 0;

  constructor(readonly path: string) {}

  /** The telemetry hook: queues the line and returns at once. */
  readonly hook = (event: Readonly<AgentTelemetryEvent>): void => {
    const line = `${JSON.stringify(snakeCaseKeys(event))}\n`;
    this.queue = this.queue.then(() => this.write(line));
  };

  /** Lines that could not be written (the file is not writable); the runs themselves went on. */
  get failedWrites(): number {
    return this.failures;
  }

  /** Resolves once every queued line is on disk. */
  flush(): Promise<void> {
    return this.queue;
  }

  async close(): Promise<void> {
    await this.flush();
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await (await handle.catch(() => undefined))?.close();
  }

  private async write(line: string): Promise<void> {
    try {
      this.handle ??= open(this.path, 'a', 0o600);
      await (await this.handle).appendFile(line, 'utf8');
    } catch {
      this.handle = undefined;
      this.failures += 1;
    }
  }
}
