import { DEFAULT_CLAIM_MAPPING, claimLimits } from './budget-claims';

describe('claimLimits', () => {
  it('reads the mapped claims, monthly unless a period claim says otherwise', () => {
    expect(claimLimits({ budget_usd: 2.5, rpm: 30 }, DEFAULT_CLAIM_MAPPING)).toEqual({ ok: true, limits: { budget: { period: 'month', micros: 2_500_000 }, rpm: 30 } });
    const mapping = { ...DEFAULT_CLAIM_MAPPING, budgetTokens: 'tg_tokens', budgetPeriod: 'tg_period', tpm: 'tg_tpm' };
    expect(claimLimits({ tg_tokens: '5000', tg_period: 'day', tg_tpm: 900 }, mapping)).toEqual({
      ok: true,
      limits: { budget: { period: 'day', tokens: 5000 }, tpm: 900 },
    });
    expect(claimLimits({ sub: 'u' }, DEFAULT_CLAIM_MAPPING)).toEqual({ ok: true, limits: undefined });
  });

  it('refuses wrong claims by name instead of leaving the caller unlimited', () => {
    expect(claimLimits({ budget_usd: -1, budget_period: 'week', rpm: 1.5, tpm: 'many' }, DEFAULT_CLAIM_MAPPING)).toEqual({
      ok: false,
      problems: [
        'JWT claim budget_usd: must be a non-negative number, got -1',
        'JWT claim rpm: must be a non-negative integer, got 1.5',
        'JWT claim tpm: must be a non-negative integer, got "many"',
        'JWT claim budget_period: must be day or month, got "week"',
      ],
    });
  });
});
