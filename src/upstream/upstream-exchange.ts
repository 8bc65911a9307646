/**
 * One upstream call as an undici dispatch handler: a JSON call read whole, or a streamed call whose body is
 * handed to its consumer. There are no retries at this level; AiClient retries whole calls (docs/decisions.md B2).
 */
import { type Dispatcher, errors, util } from 'undici';
import { InvalidResponseError, TimeoutError, TollgateError } from '../common/errors';
import { mapNetworkError, parseJson } from './upstream-errors';
import type { JsonResponse, ResponseHeaders, StreamResponse } from './upstream-types';

/** Error bodies are only inspected for a code, never surfaced; a small cap keeps a hostile upstream cheap. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

type StatusErrorMapper = (status: number, headers: ResponseHeaders, parsed: unknown) => TollgateError;

/**
 * What a JSON call and a streamed call share as undici dispatch handlers: the caller's signal (an abort
 * before sending settles the call unsent, one during it hands back the caller's reason), the timeout
 * timer, the status and headers, error bodies mapped by status, and transport failures mapped to
 * ConnectionError/TimeoutError. Once `closed`, later callbacks are ignored.
 */
abstract class UpstreamExchange implements Dispatcher.DispatchHandlers {
  /** Nothing more will be read: the call finished, failed or was given up. */
  protected closed = false;
  protected abortRequest?: (error?: Error) => void;
  protected status = 0;
  protected headers: ResponseHeaders = {};
  private timer?: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.fail(callerAbortReason(this.callerSignal!));

  constructor(
    protected readonly provider: string,
    private readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
    private readonly statusError: StatusErrorMapper,
    private readonly onSent: (() => void) | undefined,
  ) {}

  /** False when the caller had already aborted: the call is settled and must not be sent. */
  start(): boolean {
    if (this.callerSignal?.aborted) {
      this.fail(callerAbortReason(this.callerSignal));
      return false;
    }
    this.callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.arm();
    return true;
  }

  /** undici hands the request a connection and writes it next: this is the moment it goes upstream. */
  onConnect(abort: (error?: Error) => void): void {
    if (this.closed) {
      abort();
      return;
    }
    this.abortRequest = abort;
    this.onSent?.();
  }

  abstract onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean;

  onError(error: Error): void {
    if (this.closed) return;
    // A transport failure while an error body was being read leaves the status to speak for the answer.
    if (this.status !== 0 && !this.isSuccess()) this.failFromStatus();
    else this.fail(error instanceof TollgateError ? error : mapNetworkError(error, this.provider));
  }

  /** Settles the call with `error` (or hands it to the consumer), once. */
  protected abstract fail(error: unknown): void;

  /** The body read so far, as text: a JSON call's whole body, a stream's error body (a 2xx stream goes to its consumer). */
  protected abstract bodyText(): string;

  protected isSuccess(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** (Re)starts the timeout: a JSON call arms it once, a stream for the headers and then each gap between chunks. */
  protected arm(): void {
    clearTimeout(this.timer);
    const { provider, timeoutMs } = this;
    this.timer = setTimeout(() => {
      const awaiting = this.abortRequest === undefined ? 'connection' : this.status === 0 ? 'headers' : 'body';
      this.fail(new TimeoutError(`${provider}: upstream did not answer within ${timeoutMs} ms`, { provider, awaiting }));
    }, timeoutMs);
    this.timer.unref?.();
  }

  protected failFromStatus(): void {
    let error: unknown;
    try {
      error = this.statusError(this.status, this.headers, tryParseJson(this.bodyText()));
    } catch (mapperFailure) {
      error = mapperFailure;
    }
    this.fail(error);
  }

  protected finish(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }
}

/**
 * One JSON call as an undici dispatch handler, with the same outcomes as a stream-based read: the timeout
 * covers headers and body, a caller abort hands back the caller's reason, a 2xx body over the limit is
 * refused, a non-2xx body is read up to {@link MAX_ERROR_BODY_BYTES} (cut beyond) and mapped by status,
 * and transport failures become ConnectionError/TimeoutError. Whichever comes first settles the call;
 * later callbacks are ignored.
 */
export class JsonExchange extends UpstreamExchange {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    provider: string,
    timeoutMs: number,
    callerSignal: AbortSignal | undefined,
    private readonly maxResponseBytes: number,
    private readonly resolve: (response: JsonResponse) => void,
    private readonly reject: (error: unknown) => void,
    statusError: StatusErrorMapper,
    onSent?: () => void,
  ) {
    super(provider, timeoutMs, callerSignal, statusError, onSent);
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    // Informational answers (100 Continue) are not the response.
    if (status < 200 || this.closed) return true;
    this.status = status;
    this.headers = util.parseHeaders(rawHeaders) as ResponseHeaders;
    this.chunks = [];
    this.size = 0;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.closed) return false;
    this.size += chunk.length;
    if (!this.isSuccess()) {
      if (this.size > MAX_ERROR_BODY_BYTES) {
        // Error bodies are only inspected for a code: what arrived so far is all that is read.
        this.failFromStatus();
        return false;
      }
    } else if (this.size > this.maxResponseBytes) {
      const limit = this.maxResponseBytes;
      this.fail(new InvalidResponseError(`${this.provider}: upstream response exceeded ${limit} bytes`, { provider: this.provider }));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.closed) return;
    if (!this.isSuccess()) {
      this.failFromStatus();
      return;
    }
    let body: unknown;
    try {
      body = parseJson(this.bodyText(), this.provider);
    } catch (error) {
      this.fail(error);
      return;
    }
    this.finish();
    this.resolve({ status: this.status, headers: this.headers, body });
  }

  protected bodyText(): string {
    return (this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)).toString('utf8');
  }

  protected fail(error: unknown): void {
    if (this.closed) return;
    this.finish();
    this.abortRequest?.();
    this.reject(error);
  }
}

/** The caller cancelled: its own reason is handed back, this is not a provider failure. */
function callerAbortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new errors.RequestAbortedError();
}

/** Chunks held for a consumer that has not pulled them yet; beyond this the upstream socket is paused. */
const STREAM_HIGH_WATER_CHUNKS = 16;

/**
 * One streamed call as an undici dispatch handler that is also the body's async iterator. Same outcomes
 * as the stream-based read it replaces: the promise settles at the headers (2xx: the stream; otherwise the
 * error body, read up to {@link MAX_ERROR_BODY_BYTES}, mapped by status); the timeout covers the headers
 * and then every gap between chunks; a caller abort hands back the caller's reason, before or during the
 * body; a transport failure becomes ConnectionError/TimeoutError at the consumer's next pull; a consumer
 * that stops early ends the upstream request, one that reads to the end leaves the connection to be reused.
 */
export class StreamExchange extends UpstreamExchange implements AsyncIterableIterator<Buffer> {
  /** The promise is settled (stream handed over, or the call failed before that). */
  private settled = false;
  private complete = false;
  private failure: unknown;
  private resumeUpstream?: () => void;
  private paused = false;
  private readonly queue: Buffer[] = [];
  private errorBody: Buffer[] = [];
  private errorBodySize = 0;
  private waiter?: { resolve: (result: IteratorResult<Buffer>) => void; reject: (error: unknown) => void };

  constructor(
    provider: string,
    timeoutMs: number,
    callerSignal: AbortSignal | undefined,
    private readonly resolve: (response: StreamResponse) => void,
    private readonly reject: (error: unknown) => void,
    statusError: StatusErrorMapper,
    onSent?: () => void,
  ) {
    super(provider, timeoutMs, callerSignal, statusError, onSent);
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // Informational answers (100 Continue) are not the response.
    if (status < 200 || this.closed) return true;
    this.status = status;
    this.headers = util.parseHeaders(rawHeaders) as ResponseHeaders;
    this.resumeUpstream = resume;
    if (this.isSuccess()) {
      this.settled = true;
      this.arm();
      this.resolve({ status, headers: this.headers, body: this });
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.closed) return false;
    if (!this.isSuccess()) {
      this.errorBodySize += chunk.length;
      // Error bodies are only inspected for a code: what arrived up to the cap is all that is read.
      if (this.errorBodySize > MAX_ERROR_BODY_BYTES) {
        this.failFromStatus();
        return false;
      }
      this.errorBody.push(chunk);
      return true;
    }
    this.arm();
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve({ value: chunk, done: false });
      return true;
    }
    this.queue.push(chunk);
    this.paused = this.queue.length >= STREAM_HIGH_WATER_CHUNKS;
    return !this.paused;
  }

  onComplete(): void {
    if (this.closed) return;
    if (!this.isSuccess()) {
      this.failFromStatus();
      return;
    }
    this.complete = true;
    this.finish();
    this.wake();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.queue.shift();
    if (chunk !== undefined) {
      if (this.paused && this.queue.length === 0) {
        this.paused = false;
        this.resumeUpstream?.();
      }
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.failure !== undefined) {
      const failure = this.failure;
      // Reported once; the iteration is over after it.
      this.failure = undefined;
      this.complete = true;
      return Promise.reject(failure);
    }
    if (this.complete || this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The consumer stopped early (break, return, a throw in its loop): the upstream request ends. */
  return(): Promise<IteratorResult<Buffer>> {
    this.queue.length = 0;
    if (!this.closed) {
      this.finish();
      this.abortRequest?.();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  protected bodyText(): string {
    return (this.errorBody.length === 1 ? this.errorBody[0] : Buffer.concat(this.errorBody)).toString('utf8');
  }

  /** Before the stream was handed over the promise rejects; after, the consumer's next pull throws. */
  protected fail(error: unknown): void {
    if (this.closed) return;
    this.finish();
    this.abortRequest?.();
    if (!this.settled) {
      this.settled = true;
      this.reject(error);
      return;
    }
    this.failure = error;
    this.wake();
  }

  /** Hands a waiting consumer the end of the stream or its failure. */
  private wake(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    this.next().then(waiter.resolve, waiter.reject);
  }
}

/** An error body is read only for a code: one that does not parse counts as no body. */
function tryParseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
