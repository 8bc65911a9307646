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
import type { IdentityLimits } from './budgets/budget-rules';
import type { Usage } from './budgets/budget-scope';
import type { BudgetsService } from './budgets/budgets.service';
import { currentCallContext } from './call-context';
import { apiKeyOf } from './governance-state';
import type { ApiKeyRecord } from './keys/api-key-record';
import { costMicros, findPrice, type PricingTable } from './ledger/pricing';

/** Output tokens reserved for a call that gave no max_tokens; the real count is settled afterwards. */
export const DEFAULT_OUTPUT_ESTIMATE = 1024;

export class GovernanceGate implements ModelCallGate {
  private readonly logger = new Logger('Budgets');

  constructor(
    private readonly allowList: ModelAllowList,
    private readonly pricing: PricingTable,
    private readonly budgets: BudgetsService,
  ) {}

  async open(call: GatedCall): Promise<GateTicket | undefined> {
    const context = currentCallContext();
    const state = context?.state;
    if (!state) return undefined;
    this.allowList.checkModelAllowed(state, call.provider, call.model);
    if (!context.request) return undefined;
    const scopes = this.budgets.scopesFor(context.request, { key: keyLimits(apiKeyOf(state)) });
    if (scopes.length === 0) return undefined;
    const outputTokens = call.maxOutputTokens ?? DEFAULT_OUTPUT_ESTIMATE;
    const estimate = this.cost(call.provider, call.providerKind, call.model, { inputTokens: call.inputTokens, outputTokens, cachedTokens: 0 });
    const reservation = await this.budgets.reserveScopes(scopes, estimate);
    return { close: (outcome) => this.close(reservation, outcome) };
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

  private close(reservation: Reservation, outcome: GateOutcome): void {
    const settled = outcome
      ? this.budgets.settle(reservation, this.cost(outcome.provider, outcome.providerKind, outcome.model, outcome.usage))
      : this.budgets.release(reservation);
    // The answer has gone out already: a counter store that fails now is logged, never the caller's error.
    settled.catch((error: unknown) => this.logger.warn(`settling a budget reservation failed: ${(error as Error)?.message ?? String(error)}`));
  }

  /** Priced calls cost micro-dollars; an unpriced model counts its tokens only (its cost is unknown, not zero-checked). */
  private cost(provider: string, kind: string, model: string, usage: { inputTokens: number; outputTokens: number; cachedTokens: number }): Usage {
    return {
      micros: costMicros(findPrice(this.pricing, provider, kind, model), usage) ?? 0,
      tokens: usage.inputTokens + usage.outputTokens,
    };
  }
}

/** An API key's own budget, rpm and tpm, in the budgets engine's terms. */
function keyLimits(record: ApiKeyRecord | undefined): IdentityLimits | undefined {
  if (!record || (record.budget === undefined && record.rpm === undefined && record.tpm === undefined)) return undefined;
  return {
    ...(record.budget
      ? {
          budget: {
            period: record.budget.period,
            ...(record.budget.microUsd !== undefined ? { micros: record.budget.microUsd } : {}),
            ...(record.budget.tokens !== undefined ? { tokens: record.budget.tokens } : {}),
          },
        }
      : {}),
    ...(record.rpm !== undefined ? { rpm: record.rpm } : {}),
    ...(record.tpm !== undefined ? { tpm: record.tpm } : {}),
  };
}
