import { type MeteredScope, WindowCache, formatUsd, planCounters, scopeProblems, usageProblems, windowOf } from './budget-scope';

describe('windowOf', () => {
  const at = (iso: string) => Date.parse(iso);

  it('gives UTC calendar days, months and minutes, with the start of the next one as the end', () => {
    expect(windowOf('day', at('2026-11-27T23:59:59.999Z'))).toEqual({ start: at('2026-11-27T00:00:00Z'), end: at('2026-11-28T00:00:00Z'), label: '2026-11-27' });
    expect(windowOf('month', at('2026-12-31T12:00:00Z'))).toEqual({ start: at('2026-12-01T00:00:00Z'), end: at('2027-01-01T00:00:00Z'), label: '2026-12' });
    expect(windowOf('month', at('2028-02-29T00:00:00Z')).end).toBe(at('2028-03-01T00:00:00Z'));
    expect(windowOf('minute', at('2026-11-27T06:12:59.999Z'))).toEqual({ start: at('2026-11-27T06:12:00Z'), end: at('2026-11-27T06:13:00Z'), label: '2026-11-27T06:12' });
  });

  it('starts a new window exactly at the end of the previous one', () => {
    const end = windowOf('day', at('2026-11-27T10:00:00Z')).end;
    expect(windowOf('day', end).label).toBe('2026-11-28');
    expect(windowOf('day', end - 1).label).toBe('2026-11-27');
  });
});

describe('WindowCache', () => {
  it('answers the remembered window inside it and a fresh one from its end on', () => {
    const cache = new WindowCache();
    const first = cache.windowOf('minute', Date.parse('2026-11-27T06:12:10Z'));
    expect(cache.windowOf('minute', Date.parse('2026-11-27T06:12:59.999Z'))).toBe(first);
    expect(cache.windowOf('minute', first.end).label).toBe('2026-11-27T06:13');
    expect(cache.windowOf('minute', first.start - 1).label).toBe('2026-11-27T06:11');
    expect(cache.windowOf('day', first.start).label).toBe('2026-11-27');
  });
});

describe('planCounters', () => {
  const now = Date.parse('2026-11-27T10:00:00Z');
  const tenant = (limit: MeteredScope['limit'], period: MeteredScope['period'] = 'month'): MeteredScope => ({ kind: 'tenant', id: 't-1', period, limit });

  it('keys a counter by period, window, kind and id', () => {
    expect(planCounters([tenant({ micros: 5 })], now, 'p:').map((plan) => plan.key)).toEqual(['p:c:month:2026-11:tenant:t-1']);
  });

  it('merges scopes on one counter into one plan with the smallest limit of each field', () => {
    const plans = planCounters([tenant({ micros: 5, tokens: 100 }), tenant({ micros: 3, requests: 9 }), tenant({ micros: 1 }, 'day')], now, 'p:');
    expect(plans).toHaveLength(2);
    expect(plans[0].scope.limit).toEqual({ micros: 3, tokens: 100, requests: 9 });
    expect(plans[1].scope.limit).toEqual({ micros: 1 });
  });
});

describe('scopeProblems and usageProblems', () => {
  it('names the scope and field of every bad value', () => {
    const problems = scopeProblems([
      { kind: 'tenant', id: 't-1', period: 'week' as 'day', limit: { micros: -5 } },
      { kind: 'team' as 'tenant', id: '', period: 'day', limit: { tokens: 1.5 } },
    ]);
    expect(problems).toEqual([
      'tenant "t-1": period must be day or month, got "week"',
      'tenant "t-1": limit.micros must be a non-negative integer, got -5',
      'scope kind must be one of tenant, sub_tenant, subject, key, got "team"',
      'team "": id must be a non-empty string',
      'team "": limit.tokens must be a non-negative integer, got 1.5',
    ]);
    expect(scopeProblems([{ kind: 'key', id: 'k', period: 'minute', limit: { requests: 0 } }])).toEqual([]);
  });

  it('refuses negative and fractional usage', () => {
    expect(usageProblems({ micros: -1, tokens: 2.5 }, 'estimate')).toEqual([
      'estimate.micros must be a non-negative integer, got -1',
      'estimate.tokens must be a non-negative integer, got 2.5',
    ]);
  });
});

describe('formatUsd', () => {
  it('shows cents, or micro-dollars when the amount needs them', () => {
    expect(formatUsd(5_000_000)).toBe('$5.00');
    expect(formatUsd(1_234)).toBe('$0.001234');
  });
});
