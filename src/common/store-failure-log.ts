/**
 * One log line per interval for a shared store that fails, naming the error class and code only: its URL
 * may carry a password, and a store that is down fails every request, which must not flood the log.
 */
export class StoreFailureLog {
  private lastAt = -Infinity;

  constructor(
    private readonly log: (message: string) => void,
    /** What the failure means for requests, after the summary: `budget store unavailable (Error ECONNREFUSED)...`. */
    private readonly describe: (summary: string) => string,
    private readonly intervalMs = 30_000,
  ) {}

  report(error: unknown): void {
    const now = Date.now();
    if (now - this.lastAt < this.intervalMs) return;
    this.lastAt = now;
    const name = error instanceof Error ? error.name : typeof error;
    const code = (error as { code?: unknown } | undefined)?.code;
    this.log(this.describe(`${name}${typeof code === 'string' ? ` ${code}` : ''}`));
  }
}
