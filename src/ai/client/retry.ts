/**
 * Retry with exponential backoff and jitter (docs/decisions.md B2): only rate-limit and connection errors are
 * retried, `retries` counts the retries after the first try, a Retry-After from the upstream is honoured
 * up to {@link MAX_RETRY_WAIT_MS}, and waiting is a timer, never a blocked event loop.
 */
import { isRetryable, RateLimitError } from '../errors';

/** No single wait is longer; a Retry-After beyond it means "give up on this provider now". */
export const MAX_RETRY_WAIT_MS = 30_000;
/** Each backoff step waits between 1x and 1.25x its nominal delay, so clients that failed together spread out. */
export const BACKOFF_JITTER = 0.25;

export interface RetryPolicy {
  /** Retries after the first try (3 means at most 4 calls). */
  retries: number;
  /** Nominal wait before the first retry; doubled for each further one. */
  baseDelayMs: number;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryHooks {
  sleep?: Sleep;
  /** Returns a number in [0, 1); injectable so tests can pin the jitter. */
  random?: () => number;
  signal?: AbortSignal;
  /** True for a failure after which no retry is worth making (the deployment it came from now cools down). */
  giveUp?: (error: unknown) => boolean;
}

/** Nominal delay `baseDelayMs * 2^(retry-1)` plus up to 25% jitter, capped at {@link MAX_RETRY_WAIT_MS}. */
export function backoffDelayMs(retry: number, baseDelayMs: number, random: () => number = Math.random): number {
  const nominal = baseDelayMs * 2 ** (retry - 1);
  return Math.min(Math.round(nominal * (1 + BACKOFF_JITTER * random())), MAX_RETRY_WAIT_MS);
}

/**
 * How long to wait before retry number `retry` (1-based) after `error`; undefined means do not retry.
 * A Retry-After is a floor (never retry sooner than the upstream asked), and one above the cap ends the retries.
 */
export function retryWaitMs(error: unknown, retry: number, baseDelayMs: number, random?: () => number): number | undefined {
  if (!isRetryable(error)) return undefined;
  const backoff = backoffDelayMs(retry, baseDelayMs, random);
  const retryAfter = error instanceof RateLimitError ? error.retryAfterMs : undefined;
  if (retryAfter === undefined) return backoff;
  if (retryAfter > MAX_RETRY_WAIT_MS) return undefined;
  return Math.max(retryAfter, backoff);
}

/** Calls `attempt(1)`, then retries eligible failures per the policy; the last error is rethrown. */
export async function callWithRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  policy: RetryPolicy,
  hooks: RetryHooks = {},
): Promise<T> {
  const sleep = hooks.sleep ?? sleepFor;
  for (let retry = 0; ; retry++) {
    try {
      return await attempt(retry + 1);
    } catch (error) {
      if (retry >= policy.retries || hooks.signal?.aborted || hooks.giveUp?.(error)) throw error;
      const wait = retryWaitMs(error, retry + 1, policy.baseDelayMs, hooks.random);
      if (wait === undefined) throw error;
      await sleep(wait, hooks.signal);
    }
  }
}

/** A timer-based wait that ends early (rejecting with the signal's reason) when the caller aborts. */
export function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
