/**
 * A seam for tracing operations that are not upstream model calls (an agent run, a tool call), so the agent
 * and MCP code know nothing of OpenTelemetry: without a tracer (the default) `traceOperation` is a plain call.
 * Process-wide, like the diagnostics channels the metrics use; the server sets it when tracing is on
 * (docs/operations.md#traces).
 */

/** GenAI semantic conventions' names for these operations. */
export type TracedOperationName = 'invoke_agent' | 'execute_tool';

export interface TracedOperation {
  name: TracedOperationName;
  /** The agent's or the tool's name. */
  target: string;
  /** Extra attributes known before the operation starts (never prompts, arguments or answers). */
  attributes?: Readonly<Record<string, string | number | boolean>>;
}

export type OperationTracer = <T>(operation: TracedOperation, run: () => Promise<T>, describe?: (result: T) => Record<string, string | number | boolean>) => Promise<T>;

let tracer: OperationTracer | undefined;

/** Runs `run` inside a span of `operation` when a tracer is set; `describe` names attributes of its result. */
export function traceOperation<T>(operation: TracedOperation, run: () => Promise<T>, describe?: (result: T) => Record<string, string | number | boolean>): Promise<T> {
  return tracer ? tracer(operation, run, describe) : run();
}

/** Sets (or, with undefined, removes) the process's operation tracer. */
export function setOperationTracer(next: OperationTracer | undefined): void {
  tracer = next;
}
