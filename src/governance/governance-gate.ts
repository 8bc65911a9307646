/**
 * The AiClient's call gate (docs/governance.md#enforcement): before a call reaches a model, the caller's
 * allow-lists and budgets are checked, and the estimated cost is reserved; when it ends, the real cost is
 * settled (or the reservation released when no model answered). Calls outside a request's call context (the
 * CLI's own commands, in-process use) pass untouched.
 */
import { Logger } from '@nestjs/common';
import type { GatedCall, GateOutcome, GateTicket, ModelCallGate } from '../ai/client/model-call-gate';
import type { ModelAllowList } from './allow-lists/model-allow-list';
import type { Reservation } from './budgets/budget-engine';
import type { Usage } from './budgets/budget-scope';
import type { BudgetsService } from './budgets/budgets.service';
import { currentCallContext } from './call-context';
import { costMicros, PriceLookup, type PricingTable } from './ledger/pricing';

/** Output tokens reserved for a call that gave no max_tokens; the real count is settled afterwards. */
export const DEFAULT_OUTPUT_ESTIMATE = 1024;

export class GovernanceGate implements ModelCallGate {
  private readonly logger = new Logger('Budgets');
  private readonly prices: PriceLookup;

  constructor(
    private readonly allowList: ModelAllowList,
    pricing: PricingTable,
    private readonly budgets: BudgetsService,
  ) {
    this.prices = new PriceLookup(pricing);
  }

  open(call: GatedCall): GateTicket | undefined | Promise<GateTicket | undefined> {
    const context = currentCallContext();
    const state = context?.state;
    if (!state) return undefined;
    this.allowList.checkModelAllowed(state, call.provider, call.model);
    if (!context.request) return undefined;
    const scopes = this.budgets.scopesFor(context.request);
    if (scopes.length === 0) return undefined;
    const outputTokens = call.maxOutputTokens ?? DEFAULT_OUTPUT_ESTIMATE;
    const estimate = this.cost(call.provider, call.providerKind, call.model, { inputTokens: call.estimateInputTokens(), outputTokens, cachedTokens: 0 });
    const ticket = (reservation: Reservation): GateTicket => ({ close: (outcome) => this.close(reservation, outcome) });
    const reserved = this.budgets.reserveScopes(scopes, estimate);
    return reserved instanceof Promise ? reserved.then(ticket) : ticket(reserved);
  }

  /** One request, no tokens, on the caller's per-minute counters only: a listing spends no budget. */
  countRequest(): void | Promise<void> {
    const request = currentCallContext()?.request;
    if (!request) return;
    const perMinute = this.budgets.scopesFor(request).filter((scope) => scope.period === 'minute');
    if (perMinute.length === 0) return;
    const counted = this.budgets.reserveScopes(perMinute, { micros: 0, tokens: 0 });
    if (counted instanceof Promise) return counted.then(() => undefined);
  }

  admits(provider: string, model: string): boolean {
    const state = currentCallContext()?.state;
    try {
      this.allowList.checkModelAllowed(state, provider, model);
      return true;
    } catch {
      return false;
    }
  }

  /** The answer has gone out already: a counter store that fails now is logged, never the caller's error. */
  private close(reservation: Reservation, outcome: GateOutcome): void {
    const failed = (error: unknown) => this.logger.warn(`settling a budget reservation failed: ${(error as Error)?.message ?? String(error)}`);
    try {
      const settled = outcome
        ? this.budgets.settle(reservation, this.cost(outcome.provider, outcome.providerKind, outcome.model, outcome.usage))
        : this.budgets.release(reservation);
      if (settled instanceof Promise) settled.catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  /** Priced calls cost micro-dollars; an unpriced model counts its tokens only (its cost is unknown, not zero-checked). */
  private cost(provider: string, kind: string, model: string, usage: { inputTokens: number; outputTokens: number; cachedTokens: number }): Usage {
    return {
      micros: costMicros(this.prices.priceOf(provider, kind, model), usage) ?? 0,
      tokens: usage.inputTokens + usage.outputTokens,
    };
  }
}
