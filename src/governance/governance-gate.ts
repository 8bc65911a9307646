/**
 * The AiClient's call gate (docs/governance.md#enforcement): before a call reaches a model, the caller's
 * allow-lists and budgets are checked, and the estimated cost is reserved; when it ends, what it cost is
 * settled (or the reservation released when no request went upstream). Calls outside a request's call
 * context (the CLI's own commands, in-process use) pass untouched.
 */
import { Logger } from '@nestjs/common';
import type { GatedCall, GateOutcome, GateTicket, ModelCallGate } from '../ai/client/model-call-gate';
import type { ModelCallUsage } from '../ai/client/model-call';
import type { ModelAllowList } from './allow-lists/model-allow-list';
import { type OutputAllowance, type Reservation, PICOS_PER_MICRO } from './budgets/budget-engine';
import type { MeteredScope, Usage } from './budgets/budget-scope';
import type { BudgetsService } from './budgets/budgets.service';
import { type CallContext, currentCallContext } from './call-context';
import { ModelNotPricedError } from './governance-errors';
import { costMicros, type ModelPrice, PriceLookup, type PricedUsage, type PricingTable } from './ledger/pricing';

/** Output tokens reserved for a call that gave no max_tokens; the real count is settled afterwards. */
export const DEFAULT_OUTPUT_ESTIMATE = 1024;
/**
 * The fewest output tokens a budget bounds a call to: a call whose input and these do not fit in what is left
 * is refused; one that fits is sent a max_tokens of what is left (at most what it asked for).
 */
export const LEAST_BOUNDED_OUTPUT = 16;
/** The response header that tells the caller its call was sent a lower max_tokens than it asked for (or none). */
export const BUDGET_MAX_TOKENS_HEADER = 'x-budget-max-tokens';

export interface GovernanceGateOptions {
  /** `governance.pricing.allow_unpriced`: admit models without a price to callers held to a dollar budget. */
  allowUnpriced?: boolean;
}

export class GovernanceGate implements ModelCallGate {
  private readonly logger = new Logger('Budgets');
  private readonly prices: PriceLookup;
  private readonly allowUnpriced: boolean;

  constructor(
    private readonly allowList: ModelAllowList,
    pricing: PricingTable,
    private readonly budgets: BudgetsService,
    options: GovernanceGateOptions = {},
  ) {
    this.prices = new PriceLookup(pricing);
    this.allowUnpriced = options.allowUnpriced ?? false;
  }

  open(call: GatedCall): GateTicket | undefined | Promise<GateTicket | undefined> {
    const context = currentCallContext();
    const state = context?.state;
    if (!state) return undefined;
    this.allowList.checkModelAllowed(state, call.provider, call.model);
    if (!context.request) return undefined;
    const scopes = this.budgets.scopesFor(context.request);
    if (scopes.length === 0) return undefined;
    const price = this.prices.priceOf(call.provider, call.providerKind, call.model);
    if (!price && !this.allowUnpriced && holdsDollars(scopes)) throw new ModelNotPricedError(`${call.provider}/${call.model}`);
    const inputTokens = call.estimateInputTokens();
    const output = outputAllowance(call, price);
    const input: Usage = { micros: costMicros(price, { inputTokens, outputTokens: 0, cachedTokens: 0 }) ?? 0, tokens: inputTokens };
    const alwaysBound = call.operation !== 'embed' && holdsSpend(scopes);
    const ticket = (reservation: Reservation): GateTicket => this.ticket(reservation, inputTokens, price, call.maxOutputTokens, alwaysBound, context);
    const reserved = this.budgets.reserveScopes(scopes, input, output);
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

  admits(provider: string, model: string, providerKind: string): boolean {
    const context = currentCallContext();
    try {
      this.allowList.checkModelAllowed(context?.state, provider, model);
    } catch {
      return false;
    }
    if (this.allowUnpriced || !context?.request || this.prices.priceOf(provider, providerKind, model)) return true;
    return !holdsDollars(this.budgets.scopesFor(context.request));
  }

  /**
   * A ticket that sends the call the max_tokens its reservation granted, and says so, when the budget granted
   * less than the caller asked for, or the caller asked for no bound and is held to tokens or dollars (an
   * unbounded answer could pass the budget by its whole length).
   */
  private ticket(
    reservation: Reservation,
    inputTokens: number,
    reservedPrice: ModelPrice | undefined,
    asked: number | undefined,
    alwaysBound: boolean,
    context: CallContext,
  ): GateTicket {
    const close = (outcome: GateOutcome) => this.close(reservation, inputTokens, reservedPrice, outcome);
    if (asked === undefined ? !alwaysBound : reservation.outputTokens >= asked) return { close };
    context.setResponseHeader?.(BUDGET_MAX_TOKENS_HEADER, String(reservation.outputTokens));
    return { maxOutputTokens: reservation.outputTokens, close };
  }

  /**
   * Nothing went upstream: the reservation's tokens and dollars are given back (an admitted request stays counted
   * against RPM). Otherwise the reservation is settled to what the call cost: the answer's usage, plus, for each attempt that went
   * out and got no answer (the caller left, a timeout, a stream cut before its usage), at least the estimate.
   * The answer has gone out already: a counter store that fails now is logged, never the caller's error.
   */
  private close(reservation: Reservation, inputTokens: number, reservedPrice: ModelPrice | undefined, outcome: GateOutcome): void {
    const failed = (error: unknown) => this.logger.warn(`settling a budget reservation failed: ${(error as Error)?.message ?? String(error)}`);
    try {
      const settled = outcome.sent ? this.budgets.settle(reservation, this.spent(reservation, inputTokens, reservedPrice, outcome)) : this.budgets.release(reservation);
      if (settled instanceof Promise) settled.catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  /**
   * An answer without usage is settled to at least the input reserved (the text estimate misses tools and images).
   * A model name the upstream answered with that has no price (`llama3.1:latest` for `llama3.1`, a served-model
   * name) is charged at the price the call was reserved at, never at nothing.
   */
  private spent(reservation: Reservation, inputTokens: number, reservedPrice: ModelPrice | undefined, outcome: GateOutcome): Usage {
    const { answered } = outcome;
    const usage = answered?.estimated ? { ...answered.usage, inputTokens: Math.max(inputTokens, answered.usage.inputTokens) } : answered?.usage;
    const total: Usage = answered && usage ? this.cost(answered.provider, answered.providerKind, answered.model, usage, reservedPrice) : { micros: 0, tokens: 0 };
    for (const cut of outcome.unanswered) {
      const usage = atLeastReserved(cut.measured, inputTokens, reservation.outputTokens);
      const cost = this.cost(cut.provider, cut.providerKind, cut.model, usage, reservedPrice);
      total.micros += cost.micros;
      total.tokens += cost.tokens;
    }
    return total;
  }

  /**
   * Priced calls cost micro-dollars, at the model's price or else the price the call was reserved at; a call
   * reserved unpriced (admitted by allow_unpriced, or held to tokens only) counts its tokens only.
   */
  private cost(provider: string, kind: string, model: string, usage: PricedUsage, reservedPrice: ModelPrice | undefined): Usage {
    return {
      micros: costMicros(this.prices.priceOf(provider, kind, model) ?? reservedPrice, usage) ?? 0,
      tokens: usage.inputTokens + usage.outputTokens,
    };
  }
}

/** Whether any scope limits tokens or dollars (day, month or minute): what an answer's length spends. */
function holdsSpend(scopes: readonly MeteredScope[]): boolean {
  for (const scope of scopes) if (scope.limit.micros !== undefined || scope.limit.tokens !== undefined) return true;
  return false;
}

/** Whether any scope counts dollars: a model without a price would pass it at cost 0. */
function holdsDollars(scopes: readonly MeteredScope[]): boolean {
  for (const scope of scopes) if (scope.limit.micros !== undefined) return true;
  return false;
}

/**
 * The output the call may be granted: its max_tokens (or {@link DEFAULT_OUTPUT_ESTIMATE}), bounded by the budget
 * down to {@link LEAST_BOUNDED_OUTPUT}, or the call's own least when it has one (a thinking call is refused rather
 * than sent a max_tokens the upstream refuses), at the model's output price. Embeddings write no output tokens.
 */
function outputAllowance(call: GatedCall, price: ModelPrice | undefined): OutputAllowance {
  const wanted = call.operation === 'embed' ? 0 : (call.maxOutputTokens ?? DEFAULT_OUTPUT_ESTIMATE);
  const least = Math.max(LEAST_BOUNDED_OUTPUT, call.leastOutputTokens ?? 0);
  return { wanted, least: Math.min(wanted, least), picosPerToken: price ? Math.round(price.output * PICOS_PER_MICRO) : 0 };
}

/** A call that got no full answer cost at least what was reserved for it, and more when more was measured. */
function atLeastReserved(measured: ModelCallUsage | undefined, inputTokens: number, outputTokens: number): ModelCallUsage {
  return {
    inputTokens: Math.max(inputTokens, measured?.inputTokens ?? 0),
    outputTokens: Math.max(outputTokens, measured?.outputTokens ?? 0),
    cachedTokens: 0,
  };
}
