/**
 * Typed errors of the AI gateway (docs/decisions.md B4; docs/operations.md gives the status of each).
 * Messages are written by Tollgate and never carry upstream bodies, parser messages or internal hosts.
 * `type` is the snake_case value used in the REST error envelope.
 */
export class TollgateError extends Error {
  readonly type: string = 'internal_error';
  /** Provider that raised it, when there is one. */
  provider?: string;
  /**
   * Set on the failure of one of the requests an attempt sent at once (a single-input embedding model: one per
   * input) when another of them had gone out: the upstream bills those, so the attempt is charged as one that
   * went out unanswered even when this failure is an error the upstream answered with.
   */
  othersSent?: boolean;

  constructor(message: string, options?: { provider?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.provider = options?.provider;
  }
}

/** Network failure: refused, reset, DNS, TLS, and (as the subclass) timeouts. Retryable. */
export class ConnectionError extends TollgateError {
  override readonly type: string = 'connection_error';
}

export class TimeoutError extends ConnectionError {
  override readonly type: string = 'timeout';
  /**
   * What the call was waiting for when it timed out: a connection (nothing went out), the response's headers, or
   * the rest of its body (a stream's next chunk); unset for a transport's own timeout.
   */
  awaiting?: 'connection' | 'headers' | 'body';

  constructor(message: string, options?: { provider?: string; cause?: unknown; awaiting?: 'connection' | 'headers' | 'body' }) {
    super(message, options);
    this.awaiting = options?.awaiting;
  }
}

/** The provider rejected our credentials. */
export class AuthenticationError extends TollgateError {
  override readonly type: string = 'provider_authentication';
}

export class RateLimitError extends TollgateError {
  override readonly type: string = 'rate_limited';
  constructor(
    message: string,
    options?: { provider?: string; cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
  /** From the upstream Retry-After header, when it sent one. */
  readonly retryAfterMs?: number;
}

export class ModelNotAvailableError extends TollgateError {
  override readonly type: string = 'model_not_available';
}

/** The caller named a model no configured provider serves: refused before any upstream call. */
export class ModelNotFoundError extends TollgateError {
  override readonly type: string = 'model_not_found';
}

/** The provider answered with something that is not its documented shape. */
export class InvalidResponseError extends TollgateError {
  override readonly type: string = 'invalid_provider_response';
}

/** Provider-side service failure (5xx), or a 4xx we cannot classify more precisely. */
export class ProviderError extends TollgateError {
  override readonly type: string = 'provider_error';
  constructor(
    message: string,
    options?: { provider?: string; cause?: unknown; status?: number },
  ) {
    super(message, options);
    this.status = options?.status;
  }
  readonly status?: number;

  /**
   * The upstream said it is overloaded, worth a retry later: Anthropic's 529 `overloaded_error`, the 503 of Gemini
   * (`UNAVAILABLE`), OpenAI and the clouds. Each client dialect answers it as its own API does.
   */
  get overloaded(): boolean {
    return this.status === 529 || this.status === 503;
  }
}

/** The caller's request is wrong (a field, a bound). */
export class InvalidRequestError extends TollgateError {
  override readonly type: string = 'invalid_request';
  /** The request field at fault, for surfaces that name it beside the message (OpenAI's `param`). */
  readonly param?: string;

  constructor(message: string, options?: { provider?: string; cause?: unknown; param?: string }) {
    super(message, options);
    this.param = options?.param;
  }
}

/**
 * The provider's content filter refused the prompt (Azure OpenAI's `content_filter` 400): the caller's request,
 * so a 400, never retried or sent to a fallback. The message names the filter categories that fired.
 */
export class ContentFilterError extends InvalidRequestError {
  override readonly type: string = 'content_filter';
}

export class UnknownProviderError extends TollgateError {
  override readonly type: string = 'unknown_provider';
}

/** The provider exists but cannot do this operation (e.g. embeddings on deepseek). */
export class CapabilityNotSupportedError extends TollgateError {
  override readonly type: string = 'capability_not_supported';
}

/**
 * Every deployment of the model cools down after failures (docs/decisions.md B18): refused before any upstream
 * call, with the time until the first of them takes traffic again.
 */
export class NoHealthyDeploymentError extends TollgateError {
  override readonly type: string = 'no_healthy_deployment';
  constructor(
    message: string,
    options: { retryAfterMs: number },
  ) {
    super(message);
    this.retryAfterMs = options.retryAfterMs;
  }
  readonly retryAfterMs: number;
}

/** Retries apply to these only (docs/decisions.md B2). */
export function isRetryable(error: unknown): boolean {
  return error instanceof ConnectionError || error instanceof RateLimitError;
}

/** Fallback applies to these only (docs/decisions.md B2). */
export function isFallbackEligible(error: unknown): boolean {
  return (
    error instanceof ConnectionError ||
    error instanceof RateLimitError ||
    error instanceof ModelNotAvailableError ||
    (error instanceof ProviderError && (error.status === undefined || error.status >= 500))
  );
}
