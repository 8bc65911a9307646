/**
 * `service.request`: one notification per upstream provider call, retries included (docs/operations.md,
 * docs/decisions.md B6). Published on Nest's event emitter (when the app has one) and on a
 * `node:diagnostics_channel` channel, so code outside Nest can subscribe too.
 */
import diagnosticsChannel from 'node:diagnostics_channel';

export const SERVICE_REQUEST_EVENT = 'service.request';
/** Namespaced as Node recommends for diagnostics channels (they are process-wide). */
export const SERVICE_REQUEST_CHANNEL = 'tollgate:service.request';

export type ServiceOperation = 'generate' | 'embed' | 'list_models' | 'health';

export interface ServiceRequestPayload {
  /** Registration name of the provider that was called. */
  provider: string;
  operation: ServiceOperation;
  status: 'success' | 'error';
  /** 1 for the first try, 2 for the first retry, ... */
  attempt: number;
  /** The error's envelope type (e.g. `rate_limited`) when status is `error`. */
  errorType?: string;
}

export interface ServiceRequestEvent {
  /** Epoch milliseconds (sub-millisecond precision). */
  start: number;
  finish: number;
  /** finish - start, milliseconds. */
  duration: number;
  payload: ServiceRequestPayload;
}

/** What the publisher needs of EventEmitter2, so the client does not depend on Nest. */
export interface EventSink {
  emit(event: string, value: ServiceRequestEvent): unknown;
}

const channel = diagnosticsChannel.channel(SERVICE_REQUEST_CHANNEL);

/** One message each time a call moves on to a fallback provider after the requested one failed. */
export const PROVIDER_FALLBACK_CHANNEL = 'tollgate:provider.fallback';

export interface ProviderFallbackEvent {
  /** The requested provider, whose failure started the fallback. */
  from: string;
  /** The candidate about to be tried. */
  to: string;
  operation: ServiceOperation;
}

const fallbackChannel = diagnosticsChannel.channel(PROVIDER_FALLBACK_CHANNEL);

export function publishProviderFallback(from: string, to: string, operation: ServiceOperation): void {
  if (fallbackChannel.hasSubscribers) fallbackChannel.publish({ from, to, operation } satisfies ProviderFallbackEvent);
}

/** Fixed for the life of the process; read once because the getter is not free on a per-call path. */
const TIME_ORIGIN = performance.timeOrigin;

/** Epoch milliseconds from the monotonic clock, so durations never go negative when the wall clock moves. */
export function preciseNow(): number {
  return TIME_ORIGIN + performance.now();
}

export class ServiceRequestPublisher {
  constructor(private readonly sink?: EventSink) {}

  /** Runs one upstream call and publishes its outcome; the call's own result or error passes through. */
  async track<T>(
    context: Omit<ServiceRequestPayload, 'status' | 'errorType'>,
    call: () => Promise<T>,
  ): Promise<T> {
    const start = preciseNow();
    try {
      const result = await call();
      this.publish(start, { ...context, status: 'success' });
      return result;
    } catch (error) {
      const type = (error as { type?: unknown })?.type;
      this.publish(start, { ...context, status: 'error', errorType: typeof type === 'string' ? type : 'internal_error' });
      throw error;
    }
  }

  private publish(start: number, payload: ServiceRequestPayload): void {
    const finish = preciseNow();
    const event: ServiceRequestEvent = { start, finish, duration: finish - start, payload };
    // A throwing subscriber must not turn a provider success into a failure.
    try {
      this.sink?.emit(SERVICE_REQUEST_EVENT, event);
    } catch {
      // Subscribers own their errors.
    }
    if (channel.hasSubscribers) channel.publish(event);
  }
}
