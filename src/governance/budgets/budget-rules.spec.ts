import type { GovernanceRequestState } from '../governance-identity';
import { type BudgetSources, type RuleSet, parseRule, scopeIds, scopesFor } from './budget-rules';

const NONE: RuleSet = { budgets: [], limits: [] };

function keyCaller(): GovernanceRequestState {
  return { identity: { tenant: 't-1', subTenant: 'north', subject: 'k-1', subjectKind: 'key', keyId: 'k-1', roles: [] }, admin: false };
}

function userCaller(): GovernanceRequestState {
  return { identity: { tenant: 't-1', subTenant: null, subject: 'u-7', subjectKind: 'user', roles: ['dev'] }, admin: false };
}

describe('scopeIds', () => {
  it('names a sub-tenant within its tenant and adds the key scope for key callers only', () => {
    expect(scopeIds(keyCaller())).toEqual([
      ['tenant', 't-1'],
      ['sub_tenant', 't-1/north'],
      ['subject', 'key:k-1'],
      ['key', 'k-1'],
    ]);
    expect(scopeIds({ identity: { tenant: null, subTenant: null, subject: 'api-token', subjectKind: 'token', roles: [] }, admin: true })).toEqual([['subject', 'api-token']]);
  });

  it('names a user within its tenant, so neither another tenant\'s user, a key nor a token of the same name shares its counters', () => {
    const user = (tenant: string | null, subject: string): GovernanceRequestState => ({ identity: { tenant, subTenant: null, subject, subjectKind: 'user', roles: [] }, admin: false });
    const subjectOf = (state: GovernanceRequestState) => scopeIds(state).find(([kind]) => kind === 'subject')?.[1];
    const ids = [
      subjectOf(user('A', 'u1')),
      subjectOf(user('B', 'u1')),
      subjectOf(user(null, 'u1')),
      subjectOf(user(null, 'api-token')),
      subjectOf(user('A', 'k-1')),
      subjectOf(keyCaller()),
      subjectOf(user('a/b', 'c')),
      subjectOf(user('a', 'b/c')),
      'api-token',
    ];
    expect(ids.slice(0, 8)).toEqual(['A/u1', 'B/u1', '/u1', '/api-token', 'A/k-1', 'key:k-1', 'a%2Fb/c', 'a/b/c']);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('scopesFor', () => {
  it('applies * rules to every caller of the kind and exact rules to their id', () => {
    const sources: BudgetSources = {
      config: {
        budgets: [
          { scope: 'tenant', id: '*', period: 'month', micros: 100_000_000 },
          { scope: 'sub_tenant', id: 't-1/north', period: 'day', tokens: 5_000 },
          { scope: 'tenant', id: 't-2', period: 'day', micros: 1 },
        ],
        limits: [{ scope: 'subject', id: '*', rpm: 60 }],
      },
      runtime: NONE,
    };
    expect(scopesFor(keyCaller(), sources)).toEqual([
      { kind: 'tenant', id: 't-1', period: 'month', limit: { micros: 100_000_000 } },
      { kind: 'sub_tenant', id: 't-1/north', period: 'day', limit: { tokens: 5_000 } },
      { kind: 'subject', id: 'key:k-1', period: 'minute', limit: { requests: 60 } },
    ]);
  });

  it('takes each field from the most specific source: run-time exact, own, configured exact, run-time *, configured *', () => {
    const sources: BudgetSources = {
      config: {
        budgets: [
          { scope: 'key', id: '*', period: 'day', micros: 1, tokens: 1 },
          { scope: 'key', id: 'k-1', period: 'day', micros: 2 },
        ],
        limits: [{ scope: 'key', id: '*', rpm: 1, tpm: 1 }],
      },
      runtime: { budgets: [{ scope: 'key', id: '*', period: 'day', tokens: 3 }], limits: [{ scope: 'key', id: 'k-1', tpm: 4 }] },
      key: { budget: { period: 'month', micros: 9 }, rpm: 5 },
    };
    expect(scopesFor(keyCaller(), sources)).toEqual([
      { kind: 'key', id: 'k-1', period: 'day', limit: { micros: 2, tokens: 3 } },
      { kind: 'key', id: 'k-1', period: 'month', limit: { micros: 9 } },
      { kind: 'key', id: 'k-1', period: 'minute', limit: { requests: 5, tokens: 4 } },
    ]);
    const runtimeWins: BudgetSources = { ...sources, runtime: { budgets: [{ scope: 'key', id: 'k-1', period: 'month', micros: 7 }], limits: [] } };
    expect(scopesFor(keyCaller(), runtimeWins).find((scope) => scope.period === 'month')?.limit).toEqual({ micros: 7 });
  });

  it('gives JWT claims to the subject scope, and nothing to a caller no rule names', () => {
    const sources: BudgetSources = { config: NONE, runtime: NONE, claims: { budget: { period: 'day', micros: 50 }, tpm: 1000 } };
    expect(scopesFor(userCaller(), sources)).toEqual([
      { kind: 'subject', id: 't-1/u-7', period: 'day', limit: { micros: 50 } },
      { kind: 'subject', id: 't-1/u-7', period: 'minute', limit: { tokens: 1000 } },
    ]);
    expect(scopesFor(userCaller(), { config: NONE, runtime: NONE, key: { rpm: 1 } })).toEqual([]);
  });
});

describe('parseRule', () => {
  it('turns dollars into micro-dollars and splits budget from rate limits', () => {
    expect(parseRule({ scope: 'tenant', id: ' t-1 ', usd: 5.25, period: 'day', rpm: 60 })).toEqual({
      ok: true,
      budget: { scope: 'tenant', id: 't-1', period: 'day', micros: 5_250_000 },
      limit: { scope: 'tenant', id: 't-1', rpm: 60 },
    });
    expect(parseRule({ scope: 'key', id: '*', tpm: 0 })).toEqual({ ok: true, limit: { scope: 'key', id: '*', tpm: 0 } });
  });

  it('names every bad field the way the input spells it', () => {
    const names = { rule: 'governance.budgets.rules[1]', field: (field: string) => `governance.budgets.rules[1].${field}` };
    expect(parseRule({ scope: 'team', id: '', usd: -5, tokens: 1.5, period: 'week', colour: 'red' }, names)).toEqual({
      ok: false,
      problems: [
        'governance.budgets.rules[1].colour: unknown field (expected scope, id, usd, tokens, period, rpm, tpm)',
        'governance.budgets.rules[1].scope: must be one of tenant, sub_tenant, subject, key, got "team"',
        'governance.budgets.rules[1].id: must be a caller id (1 to 256 characters) or *',
        'governance.budgets.rules[1].usd: must be a number of dollars from 0 to 10000000, got -5',
        'governance.budgets.rules[1].tokens: must be a non-negative integer, got 1.5',
        'governance.budgets.rules[1].period: must be day or month, got "week"',
      ],
    });
    expect(parseRule({ scope: 'tenant', id: 't', usd: 1 })).toEqual({ ok: false, problems: ['period: is required with usd or tokens (day or month)'] });
    expect(parseRule({ scope: 'tenant', id: 't', rpm: 1, period: 'day' })).toEqual({ ok: false, problems: ['period: applies to usd or tokens, and neither is set'] });
    expect(parseRule({ scope: 'tenant', id: 't' }, { rule: 'budgets set', field: (field) => `--${field}` })).toEqual({
      ok: false,
      problems: ['budgets set: set --usd, --tokens, --rpm, --tpm (one at least)'],
    });
    expect(parseRule([1])).toEqual({ ok: false, problems: ['body: must be an object'] });
  });

  it('refuses a subject id that names no one caller, such as a bare user id that once named that user in every tenant', () => {
    for (const id of ['*', 't-1/u-7', '/u-7', 'key:3f9a0c1b2d4e', 'api-token', 'admin-token']) expect(parseRule({ scope: 'subject', id, rpm: 1 }).ok).toBe(true);
    expect(parseRule({ scope: 'subject', id: 'u-7', rpm: 1 })).toEqual({
      ok: false,
      problems: ['id: a subject is named <tenant>/<user> (a JWT user; /<user> without a tenant), key:<key id>, api-token, admin-token or *, got "u-7"'],
    });
    expect(parseRule({ scope: 'subject', id: 't-1/', rpm: 1 }).ok).toBe(false);
  });
});
