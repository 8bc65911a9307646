/**
 * Health results and model listings per provider, shared by every caller for `healthCacheMs` (docs/decisions.md
 * D9): listings and health reports call every provider, and a caller must not turn its requests into that many
 * upstream calls.
 */
export class SharedAnswers {
  private readonly answers = new Map<string, { at: number; answer: Promise<unknown> }>();

  constructor(private readonly ttlMs: number) {}

  /**
   * One answer per key for the TTL, shared from the moment it is asked (concurrent callers wait for the same
   * upstream call). A failure is reused too, for the same time.
   */
  remembered<T>(key: string, fetch: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const known = this.answers.get(key);
    if (known && now - known.at < this.ttlMs) return known.answer as Promise<T>;
    const answer = fetch();
    // The reuse must not leave an unhandled rejection when no caller is waiting any more.
    answer.catch(() => undefined);
    this.answers.set(key, { at: now, answer });
    return answer;
  }
}

/** `answer`, or the signal's reason once the caller aborts: the caller stops waiting, the shared work goes on. */
export function abortable<T>(answer: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return answer;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
