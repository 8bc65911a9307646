/**
 * The hook governance puts in front of every client call (docs/governance.md#enforcement): it sees the routed
 * provider and model before any upstream call, may refuse the call (403 `model_not_allowed`, 429
 * `budget_exceeded`), and hears back what the call cost. Without a gate the client does no such work.
 */
import type { ProviderKind } from '../providers/ai-provider.interface';
import type { ModelCallOperation, ModelCallUsage } from './model-call';

/** One client call about to reach a model, as routed. */
export interface GatedCall {
  provider: string;
  providerKind: ProviderKind;
  model: string;
  operation: ModelCallOperation;
  /** Estimated from the text sent (4 characters per token); counted only for a gate that reserves. */
  estimateInputTokens(): number;
  /** The caller's output bound (`max_tokens`), when it gave one. */
  maxOutputTokens?: number;
}

/** What answered and its usage (upstream figures, or estimated); undefined when no model answered. */
export type GateOutcome = { provider: string; providerKind: ProviderKind; model: string; usage: ModelCallUsage } | undefined;

export interface GateTicket {
  /** Called once, when the call ended (a stream: when it stopped, however). */
  close(outcome: GateOutcome): void;
}

export interface ModelCallGate {
  /**
   * A ticket to close after the call, or undefined when nothing needs settling; throws or rejects to refuse.
   * Synchronous when nothing is reserved (a caller without budgets), so such a call awaits no promise.
   */
  open(call: GatedCall): GateTicket | undefined | Promise<GateTicket | undefined>;
  /** Whether fallback may move the call to this provider and model. */
  admits(provider: string, model: string): boolean;
  /**
   * Counts a request that calls no model (a model listing, a health report) against the caller's per-minute
   * request limits; throws or rejects to refuse it. Listings are answered from a short cache, but a caller
   * over its RPM is refused them like any other request.
   */
  countRequest?(): void | Promise<void>;
}
