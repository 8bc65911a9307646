import { BUDGET_PERIODS, type BudgetPeriod, MICROS_PER_USD } from './budget-scope';
import type { IdentityLimits } from './budget-rules';

/** Which JWT claims carry a caller's own limits (`governance.claims`); each names a claim of the payload. */
export interface ClaimMapping {
  budgetUsd: string;
  budgetTokens: string;
  budgetPeriod: string;
  rpm: string;
  tpm: string;
}

export const DEFAULT_CLAIM_MAPPING: Readonly<ClaimMapping> = Object.freeze({
  budgetUsd: 'budget_usd',
  budgetTokens: 'budget_tokens',
  budgetPeriod: 'budget_period',
  rpm: 'rpm',
  tpm: 'tpm',
});

export type ClaimLimitsResult = { ok: true; limits: IdentityLimits | undefined } | { ok: false; problems: string[] };

/**
 * The subject's limits from a verified JWT payload. A budget without a period claim is monthly. A claim that
 * is present but wrong refuses the request (naming the claim) rather than leaving the caller unlimited.
 * Numbers may come as numeric strings, which some identity providers emit for custom claims.
 */
export function claimLimits(payload: Record<string, unknown>, mapping: ClaimMapping): ClaimLimitsResult {
  const problems: string[] = [];
  const read = (claim: string, integer: boolean): number | undefined => {
    const raw = payload[claim];
    if (raw === undefined || raw === null) return undefined;
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (integer && !Number.isSafeInteger(value))) {
      problems.push(`JWT claim ${claim}: must be a non-negative ${integer ? 'integer' : 'number'}, got ${JSON.stringify(raw)}`);
      return undefined;
    }
    return value;
  };
  const usd = read(mapping.budgetUsd, false);
  const tokens = read(mapping.budgetTokens, true);
  const rpm = read(mapping.rpm, true);
  const tpm = read(mapping.tpm, true);
  const rawPeriod = payload[mapping.budgetPeriod];
  if (rawPeriod !== undefined && !(BUDGET_PERIODS as readonly unknown[]).includes(rawPeriod)) {
    problems.push(`JWT claim ${mapping.budgetPeriod}: must be day or month, got ${JSON.stringify(rawPeriod)}`);
  }
  if (problems.length) return { ok: false, problems };
  const limits: IdentityLimits = {};
  if (usd !== undefined || tokens !== undefined) {
    limits.budget = {
      period: (rawPeriod as BudgetPeriod | undefined) ?? 'month',
      ...(usd !== undefined ? { micros: Math.round(usd * MICROS_PER_USD) } : {}),
      ...(tokens !== undefined ? { tokens } : {}),
    };
  }
  if (rpm !== undefined) limits.rpm = rpm;
  if (tpm !== undefined) limits.tpm = tpm;
  return { ok: true, limits: Object.keys(limits).length ? limits : undefined };
}
