/**
 * Where the W3C trace context (traceparent, tracestate) of the current attempt is added to every upstream
 * request, set by the server when tracing is on (docs/operations.md#traces). Unset (the default) it costs one
 * check per request. Process-wide, like the diagnostics channels.
 */
export type TraceContextInjector = (headers: Record<string, string>) => void;

let injector: TraceContextInjector | undefined;

export function setTraceContextInjector(next: TraceContextInjector | undefined): void {
  injector = next;
}

/** Adds the current trace context to `headers` when tracing is on. */
export function addTraceContext(headers: Record<string, string>): void {
  injector?.(headers);
}
