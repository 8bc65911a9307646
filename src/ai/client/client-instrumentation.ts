/**
 * What an observer outside the AI stack (OpenTelemetry tracing: docs/operations.md#traces) may put around the
 * client's work without the client knowing it: each registered provider, so every upstream attempt (each
 * retry, each fallback candidate) passes through it, and the call gate, so it hears the budget's decision.
 * The client's own flow is unchanged; without instrumentation nothing is wrapped.
 */
import type { AiProvider } from '../providers/ai-provider.interface';
import type { ModelCallGate } from './model-call-gate';

export interface ClientInstrumentation {
  /** A provider that behaves as `provider` does (same name, kind, capabilities, answers and errors). */
  provider(provider: AiProvider): AiProvider;
  /** A gate that decides as `gate` does. */
  gate(gate: ModelCallGate): ModelCallGate;
}
