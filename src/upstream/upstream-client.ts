/**
 * The HTTP client for everything Tollgate calls upstream (provider adapters, search tools): one keep-alive
 * undici Pool per instance (so two registrations of one kind with different URLs never share state), JSON
 * requests with a combined caller-signal + timeout, bounded bodies, and the translation of transport and
 * status failures into Tollgate's typed errors. Messages are Tollgate's own: upstream bodies, parser
 * messages and hosts never reach them (docs/decisions.md B4).
 */
import { type Dispatcher, Pool } from 'undici';
import { TollgateError } from '../common/errors';
import { JsonExchange, StreamExchange } from './upstream-exchange';
import { mapUpstreamError } from './upstream-errors';
import { addTraceContext } from './trace-context-headers';
import type {
  JsonResponse,
  ResponseHeaders,
  StreamResponse,
  UpstreamClientOptions,
  UpstreamErrorMapper,
  UpstreamErrorResponse,
  UpstreamRequestOptions,
} from './upstream-types';

/** Large enough for a 32-input batch of 3072-dimension float vectors serialised as JSON. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export class UpstreamClient {
  readonly provider: string;
  private readonly basePath: string;
  /** One origin per instance, so a Pool: an Agent would only add a per-call origin lookup in front of it. */
  private readonly pool: Pool;
  /** A true private field: auth headers never show up in inspect() or JSON of the instance. */
  readonly #defaultHeaders: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly errorMapper?: UpstreamErrorMapper;

  constructor(options: UpstreamClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new TollgateError(`${options.provider}: provider url is not a valid URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TollgateError(`${options.provider}: provider url must be http or https`);
    }
    this.provider = options.provider;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.#defaultHeaders = { accept: 'application/json', ...options.headers };
    this.timeoutMs = options.timeoutMs;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.errorMapper = options.mapError;
    // Our own timer enforces the timeout (re-armed per chunk for streams), so undici's timers are off.
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 32,
      headersTimeout: 0,
      bodyTimeout: 0,
      ...(options.lookup ? { connect: { lookup: options.lookup } } : {}),
    });
  }

  getJson<T = unknown>(path: string, options: UpstreamRequestOptions = {}): Promise<JsonResponse<T>> {
    return this.json<T>('GET', path, undefined, options);
  }

  postJson<T = unknown>(path: string, body: unknown, options: UpstreamRequestOptions = {}): Promise<JsonResponse<T>> {
    return this.json<T>('POST', path, body, options);
  }

  /**
   * Sends a request and returns the body as a stream once a 2xx status arrived; non-2xx answers are read
   * (bounded) and mapped to errors like any other call. The timeout applies to the headers and then to
   * every gap between chunks, so a long but lively stream is not cut off. Like JSON calls, a dispatch
   * handler: no Readable, async-iterator or AbortController machinery per stream.
   */
  stream(method: 'GET' | 'POST', path: string, body: unknown, options: UpstreamRequestOptions = {}): Promise<StreamResponse> {
    return new Promise<StreamResponse>((resolve, reject) => {
      const request = this.dispatchOptions(method, path, body, options);
      const exchange = new StreamExchange(
        this.provider,
        options.timeoutMs ?? this.timeoutMs,
        options.signal,
        resolve,
        reject,
        (status, headers, parsed) => this.statusError(status, headers, parsed, options),
        options.onSent,
      );
      if (exchange.start()) this.pool.dispatch(request, exchange);
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /**
   * JSON calls go straight to undici's dispatcher: the whole body is wanted in memory anyway, so the
   * response stream, its async iterator and an AbortController per call would only be overhead.
   */
  private json<T>(method: 'GET' | 'POST', path: string, body: unknown, options: UpstreamRequestOptions): Promise<JsonResponse<T>> {
    return new Promise<JsonResponse>((resolve, reject) => {
      const request = this.dispatchOptions(method, path, body, options);
      const exchange = new JsonExchange(
        this.provider,
        options.timeoutMs ?? this.timeoutMs,
        options.signal,
        this.maxResponseBytes,
        resolve,
        reject,
        (status, headers, parsed) => this.statusError(status, headers, parsed, options),
        options.onSent,
      );
      if (exchange.start()) this.pool.dispatch(request, exchange);
    }) as Promise<JsonResponse<T>>;
  }

  private dispatchOptions(method: 'GET' | 'POST', path: string, body: unknown, options: UpstreamRequestOptions): Dispatcher.DispatchOptions {
    const headers: Record<string, string> = { ...this.#defaultHeaders, ...options.headers };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    addTraceContext(headers);
    return { path: this.basePath + path + queryString(options.query), method, headers, body: payload };
  }

  /** The adapter's refinement of a non-2xx answer, else the default status mapping. */
  private statusError(status: number, headers: ResponseHeaders, parsed: unknown, options: UpstreamRequestOptions): TollgateError {
    const context: UpstreamErrorResponse = { provider: this.provider, status, headers, body: parsed, model: options.model };
    return this.errorMapper?.(context) ?? mapUpstreamError(context);
  }
}

function queryString(query: Record<string, string | undefined> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
