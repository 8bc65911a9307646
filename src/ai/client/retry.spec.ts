import { AuthenticationError, ConnectionError, ProviderError, RateLimitError, TimeoutError } from '../errors';
import { backoffDelayMs, callWithRetry, MAX_RETRY_WAIT_MS, retryWaitMs, sleepFor } from './retry';

const noJitter = () => 0;
const fullJitter = () => 0.999999;

describe('backoffDelayMs', () => {
  it('starts at the configured delay and doubles per retry', () => {
    expect([1, 2, 3, 4].map((retry) => backoffDelayMs(retry, 1000, noJitter))).toEqual([1000, 2000, 4000, 8000]);
  });

  it('adds at most 25% jitter, never less than the nominal delay', () => {
    expect(backoffDelayMs(1, 1000, fullJitter)).toBe(1250);
    expect(backoffDelayMs(2, 1000, () => 0.5)).toBe(2250);
  });

  it('never waits longer than 30 s', () => {
    expect(backoffDelayMs(10, 1000, fullJitter)).toBe(MAX_RETRY_WAIT_MS);
  });
});

describe('retryWaitMs', () => {
  it('retries connection errors, timeouts and rate limits only', () => {
    expect(retryWaitMs(new ConnectionError('x'), 1, 100, noJitter)).toBe(100);
    expect(retryWaitMs(new TimeoutError('x'), 1, 100, noJitter)).toBe(100);
    expect(retryWaitMs(new RateLimitError('x'), 1, 100, noJitter)).toBe(100);
    expect(retryWaitMs(new ProviderError('x', { status: 503 }), 1, 100, noJitter)).toBeUndefined();
    expect(retryWaitMs(new AuthenticationError('x'), 1, 100, noJitter)).toBeUndefined();
    expect(retryWaitMs(new Error('x'), 1, 100, noJitter)).toBeUndefined();
  });

  it('honours Retry-After as a floor over the backoff', () => {
    expect(retryWaitMs(new RateLimitError('x', { retryAfterMs: 5000 }), 1, 100, noJitter)).toBe(5000);
    expect(retryWaitMs(new RateLimitError('x', { retryAfterMs: 10 }), 2, 100, noJitter)).toBe(200);
  });

  it('gives up when Retry-After asks for more than 30 s', () => {
    expect(retryWaitMs(new RateLimitError('x', { retryAfterMs: 30_000 }), 1, 100, noJitter)).toBe(30_000);
    expect(retryWaitMs(new RateLimitError('x', { retryAfterMs: 30_001 }), 1, 100, noJitter)).toBeUndefined();
  });
});

describe('callWithRetry (fake timers)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Fails with the given errors in turn, then answers 'ok'; records when each call happened. */
  function scripted(errors: unknown[]) {
    const calls: number[] = [];
    const attempt = jest.fn(async (n: number) => {
      calls.push(Date.now());
      if (n <= errors.length) throw errors[n - 1];
      return 'ok';
    });
    return { attempt, calls };
  }

  it('makes at most retries + 1 calls, waiting 1x, 2x, 4x the delay between them', async () => {
    const { attempt, calls } = scripted([new ConnectionError('a'), new ConnectionError('b'), new ConnectionError('c'), new ConnectionError('d')]);
    const started = Date.now();
    const outcome = callWithRetry(attempt, { retries: 3, baseDelayMs: 1000 }, { random: noJitter }).catch((e: unknown) => e);

    await jest.advanceTimersByTimeAsync(0);
    expect(attempt).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(999);
    expect(attempt).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(attempt).toHaveBeenCalledTimes(2);
    await jest.advanceTimersByTimeAsync(2000 + 4000);
    expect(attempt).toHaveBeenCalledTimes(4);

    const error = await outcome;
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toBe('d');
    expect(calls.map((at) => at - started)).toEqual([0, 1000, 3000, 7000]);
  });

  it('returns the first success', async () => {
    const { attempt } = scripted([new RateLimitError('busy')]);
    const outcome = callWithRetry(attempt, { retries: 3, baseDelayMs: 50 }, { random: noJitter });
    await jest.advanceTimersByTimeAsync(50);
    await expect(outcome).resolves.toBe('ok');
    expect(attempt).toHaveBeenCalledTimes(2);
  });

  it('waits what Retry-After says before retrying a 429', async () => {
    const { attempt } = scripted([new RateLimitError('busy', { retryAfterMs: 3000 })]);
    const outcome = callWithRetry(attempt, { retries: 1, baseDelayMs: 100 }, { random: noJitter });
    await jest.advanceTimersByTimeAsync(2999);
    expect(attempt).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    await expect(outcome).resolves.toBe('ok');
  });

  it('does not retry a non-retryable error, nor when retries is 0', async () => {
    const provider = scripted([new ProviderError('down', { status: 500 })]);
    await expect(callWithRetry(provider.attempt, { retries: 3, baseDelayMs: 10 })).rejects.toBeInstanceOf(ProviderError);
    expect(provider.attempt).toHaveBeenCalledTimes(1);

    const connection = scripted([new ConnectionError('refused')]);
    await expect(callWithRetry(connection.attempt, { retries: 0, baseDelayMs: 10 })).rejects.toBeInstanceOf(ConnectionError);
    expect(connection.attempt).toHaveBeenCalledTimes(1);
  });

  it('stops waiting as soon as the caller aborts, with the caller\'s reason', async () => {
    const { attempt } = scripted([new ConnectionError('a'), new ConnectionError('b')]);
    const controller = new AbortController();
    const outcome = callWithRetry(attempt, { retries: 3, baseDelayMs: 10_000 }, { signal: controller.signal }).catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(100);
    controller.abort(new Error('caller went away'));
    expect(((await outcome) as Error).message).toBe('caller went away');
    expect(attempt).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('sleepFor', () => {
  it('rejects at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(sleepFor(1000, controller.signal)).rejects.toThrow('gone');
  });
});
