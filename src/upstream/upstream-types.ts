/** What the upstream HTTP client takes and hands back, shared by the client, its exchanges and error mappers. */
import type { IncomingHttpHeaders } from 'node:http';
import type { LookupFunction } from 'node:net';
import type { TollgateError } from '../common/errors';

export type ResponseHeaders = IncomingHttpHeaders;

/** A non-2xx answer, handed to an adapter's error mapper. `body` is parsed JSON when it parsed, else undefined. */
export interface UpstreamErrorResponse {
  provider: string;
  status: number;
  headers: ResponseHeaders;
  body: unknown;
  /** The model the request named, when it named one; lets 404 be read as "model not available". */
  model?: string;
}

/** Returns a refined error, or undefined to fall back to the default status mapping (`mapUpstreamError`). */
export type UpstreamErrorMapper = (response: UpstreamErrorResponse) => TollgateError | undefined;

export interface UpstreamClientOptions {
  /** Registration name, used as the prefix of every error message. */
  provider: string;
  /** Base URL; request paths are appended to it (a trailing slash is tolerated). */
  baseUrl: string;
  /** Sent on every request (auth headers live here). */
  headers?: Record<string, string>;
  timeoutMs: number;
  maxResponseBytes?: number;
  /** Adapter-specific refinement of the default status mapping. */
  mapError?: UpstreamErrorMapper;
  /** Keep-alive sockets per origin. */
  connections?: number;
  /** Resolves host names for new connections (search tools refuse internal addresses with it). */
  lookup?: LookupFunction;
}

export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  /** Overrides the instance timeout for this call. */
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Model named by the request, for error mapping. */
  model?: string;
  /**
   * Told once, when the request is handed to a connection to be written: from then on the upstream may act on
   * it (and bill it), whatever happens to the answer. Never told when the call fails to connect or is aborted
   * before that (the budget gate gives such a call's reservation back).
   */
  onSent?: () => void;
  query?: Record<string, string | undefined>;
}

export interface JsonResponse<T = unknown> {
  status: number;
  headers: ResponseHeaders;
  body: T;
}

export interface StreamResponse {
  status: number;
  headers: ResponseHeaders;
  /** Raw body chunks; the per-chunk idle timeout is the request timeout. */
  body: AsyncIterable<Buffer>;
}
