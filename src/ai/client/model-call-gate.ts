/**
 * The hook governance puts in front of every client call (docs/governance.md#enforcement): it sees the routed
 * provider and model before any upstream call, may refuse the call (403 `model_not_allowed` or
 * `model_not_priced`, 429 `budget_exceeded`) or bound its max_tokens, and hears back whether a request went
 * upstream and what the call cost. Without a gate the client does no such work.
 */
import type { ProviderKind } from '../providers/ai-provider.interface';
import type { ModelCallOperation, ModelCallUsage } from './model-call';

/** One client call about to reach a model, as routed. */
export interface GatedCall {
  provider: string;
  providerKind: ProviderKind;
  model: string;
  operation: ModelCallOperation;
  /** Estimated from everything sent (model-call.ts requestInputTokens); counted only for a gate that reserves. */
  estimateInputTokens(): number;
  /** The caller's output bound (`max_tokens`), when it gave one. */
  maxOutputTokens?: number;
  /** The fewest output tokens the call can be sent with (Anthropic thinking): a budget that grants fewer refuses it. */
  leastOutputTokens?: number;
}

/** A provider and model a request of the call went to. */
export interface CalledModel {
  provider: string;
  providerKind: ProviderKind;
  model: string;
}

/** How a call ended, as far as the upstream is concerned. */
export interface GateOutcome {
  /** Whether any request of the call went upstream (from then on the provider may bill it); false: nothing did. */
  sent: boolean;
  /** The attempt that answered, with its usage: the upstream's figures, or (`estimated`) from the text. */
  answered?: CalledModel & { usage: ModelCallUsage; estimated: boolean };
  /**
   * Attempts that went upstream and got no answer: the caller left, a timeout, a cut connection, an unreadable
   * answer, a stream stopped before its usage arrived (`measured`: what its text came to).
   */
  unanswered: ReadonlyArray<CalledModel & { measured?: ModelCallUsage }>;
}

export interface GateTicket {
  /** The max_tokens to send instead of the caller's (or none): the budget covers no more output. */
  readonly maxOutputTokens?: number;
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
  admits(provider: string, model: string, providerKind: ProviderKind): boolean;
  /**
   * Counts a request that calls no model (a model listing, a health report) against the caller's per-minute
   * request limits; throws or rejects to refuse it. Listings are answered from a short cache, but a caller
   * over its RPM is refused them like any other request.
   */
  countRequest?(): void | Promise<void>;
}
