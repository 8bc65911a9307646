import type { GovernanceRequestState } from '../governance-identity';
import { UsageQueryError } from './usage-query';
import { usageQueryFor, UsageScopeError } from './usage-request';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const caller = (tenant: string | null, admin = false, operator = admin && tenant === null): GovernanceRequestState => ({
  identity: { tenant, subTenant: null, subject: 'u-1', subjectKind: 'user', roles: [] },
  admin,
  operator,
});

function parameterOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageQueryError) return `${error.parameter}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a UsageQueryError');
}

describe('usageQueryFor', () => {
  it('defaults to the last seven days grouped by day, scoped to the caller\'s tenant', () => {
    expect(usageQueryFor({}, caller('t-1'), NOW)).toEqual({ from: NOW - 7 * 86_400_000, to: NOW, groupBy: 'day', tenant: 't-1' });
  });

  it('reads dates, date-times with an offset and epoch milliseconds', () => {
    const query = usageQueryFor({ from: '2026-11-01', to: '2026-11-02T06:00:00+02:00', group_by: 'model' }, caller('t-1'), NOW);
    expect(query).toMatchObject({ from: Date.parse('2026-11-01T00:00:00Z'), to: Date.parse('2026-11-02T04:00:00Z'), groupBy: 'model' });
    expect(usageQueryFor({ from: '1000', to: '2000' }, caller('t-1'), NOW)).toMatchObject({ from: 1000, to: 2000 });
  });

  it('names the parameter of every bad value', () => {
    expect(parameterOf(() => usageQueryFor({ from: 'yesterday' }, caller('t-1'), NOW))).toMatch(/^from: from must be a date/);
    expect(parameterOf(() => usageQueryFor({ to: '2026-11-02T10:00' }, caller('t-1'), NOW))).toMatch(/^to: /);
    expect(parameterOf(() => usageQueryFor({ from: '2026-11-02', to: '2026-11-01' }, caller('t-1'), NOW))).toBe('from: from must be before to');
    expect(parameterOf(() => usageQueryFor({ from: '2020-01-01', to: '2026-01-01' }, caller('t-1'), NOW))).toMatch(/^to: from to to must span at most/);
    expect(parameterOf(() => usageQueryFor({ group_by: 'week' }, caller('t-1'), NOW))).toBe(
      'group_by: group_by must be one of tenant, sub_tenant, subject, key, provider, model, day',
    );
    expect(parameterOf(() => usageQueryFor({ from: ['1', '2'] as unknown as string }, caller('t-1'), NOW))).toBe('from: from must be given once');
  });

  it('lets an operator see every tenant or name one, and nobody else (a tenant\'s admin included) look beyond its own', () => {
    expect(usageQueryFor({}, caller('t-1', true), NOW).tenant).toBe('t-1');
    expect(() => usageQueryFor({ tenant: 't-2' }, caller('t-1', true), NOW)).toThrow(new UsageScopeError('tenant: a caller may only see its own tenant'));
    expect(usageQueryFor({ tenant: 't-2' }, caller('t-1', true, true), NOW).tenant).toBe('t-2');
    expect(usageQueryFor({}, caller(null, true), NOW).tenant).toBeUndefined();
    expect(usageQueryFor({ tenant: 't-2' }, caller(null, true), NOW).tenant).toBe('t-2');
    expect(usageQueryFor({ tenant: 't-1' }, caller('t-1'), NOW).tenant).toBe('t-1');
    expect(() => usageQueryFor({ tenant: 't-2' }, caller('t-1'), NOW)).toThrow(new UsageScopeError('tenant: a caller may only see its own tenant'));
    expect(() => usageQueryFor({}, caller(null), NOW)).toThrow(UsageScopeError);
    expect(() => usageQueryFor({}, undefined, NOW)).toThrow(UsageScopeError);
  });
});
