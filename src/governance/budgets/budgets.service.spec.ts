import { setAuthContext } from '../../auth/request-context';
import { GOVERNANCE_REQUEST_KEY, type GovernanceRequestState } from '../governance-identity';
import type { ApiKeyRecord } from '../keys/api-key-record';
import { DEFAULT_CLAIM_MAPPING } from './budget-claims';
import { CountingBudgetEngine } from './budget-engine';
import { BudgetExceededError, InvalidBudgetError } from './budget-errors';
import { MemoryBudgetRuleStore } from './budget-rule-store';
import { BudgetsService } from './budgets.service';
import type { BudgetsSettings } from './budgets-settings';
import { MemoryCounterStore } from './memory-counter-store';

describe('BudgetsService', () => {
  const settings: BudgetsSettings = {
    store: { kind: 'memory' },
    refreshMs: 1000,
    rules: { budgets: [{ scope: 'tenant', id: '*', period: 'month', micros: 1_000_000 }], limits: [] },
    claims: DEFAULT_CLAIM_MAPPING,
  };
  let service: BudgetsService;
  beforeEach(() => {
    service = new BudgetsService(settings, new CountingBudgetEngine(new MemoryCounterStore(), 'p:'), new MemoryBudgetRuleStore());
  });
  afterEach(() => service.onModuleDestroy());

  function request(state: GovernanceRequestState | undefined, payload?: Record<string, unknown>): object {
    const request: Record<string, unknown> = { raw: {} };
    if (state) request[GOVERNANCE_REQUEST_KEY] = state;
    if (payload) setAuthContext(request, { payload, userId: String(payload.sub), pathnameSlugs: [], roleIds: [] });
    return request;
  }
  const user = (tenant: string): GovernanceRequestState => ({ identity: { tenant, subTenant: null, subject: 'u-1', subjectKind: 'user', roles: [] }, admin: false });

  it('holds a request without governance state to nothing', async () => {
    expect(service.scopesFor(request(undefined))).toEqual([]);
    const reservation = await service.reserve(request(undefined), { micros: 10 ** 12, tokens: 0 });
    expect(reservation.keys).toEqual([]);
  });

  it("reads the subject's budget from the JWT's claims and refuses bad ones by name", () => {
    expect(service.scopesFor(request(user('t-1'), { sub: 'u-1', budget_usd: '0.5', budget_period: 'day' }))).toEqual([
      { kind: 'tenant', id: 't-1', period: 'month', limit: { micros: 1_000_000 } },
      { kind: 'subject', id: 't-1/u-1', period: 'day', limit: { micros: 500_000 } },
    ]);
    expect(() => service.scopesFor(request(user('t-1'), { sub: 'u-1', rpm: -3 }))).toThrow(new InvalidBudgetError(['JWT claim rpm: must be a non-negative integer, got -3']));
  });

  it('applies a run-time rule from the next call on, over the configured one', async () => {
    await service.reserve(request(user('t-2')), { micros: 600_000, tokens: 0 });
    await service.setRule({ scope: 'tenant', id: 't-2', usd: 0.5, period: 'month' });
    await expect(service.reserve(request(user('t-2')), { micros: 1, tokens: 0 })).rejects.toBeInstanceOf(BudgetExceededError);
    expect(await service.deleteRules('tenant', 't-2')).toBe(1);
    await service.reserve(request(user('t-2')), { micros: 400_000, tokens: 0 });
    await expect(service.setRule({ scope: 'tenant', id: 't-2', usd: -1, period: 'month' })).rejects.toThrow('usd: must be a number of dollars from 0 to 10000000, got -1');
  });

  it("re-resolves a caller's scopes when the run-time rules change, though its state object stays the same", async () => {
    // A key's state is one object for as long as its lookup is reused; the scopes resolved for it must follow the rules.
    const key: GovernanceRequestState & { apiKey: ApiKeyRecord } = {
      identity: { tenant: 't-3', subTenant: null, subject: 'k-3', subjectKind: 'key', keyId: 'k-3', roles: [] },
      admin: false,
      apiKey: { id: 'k-3', name: 'ci', tenant: 't-3', hash: 'h', createdAt: '2026-11-27T00:00:00.000Z', rpm: 5 },
    };
    const tenantMonth = { kind: 'tenant', id: 't-3', period: 'month', limit: { micros: 1_000_000 } };
    expect(service.scopesFor(request(key))).toEqual([tenantMonth, { kind: 'key', id: 'k-3', period: 'minute', limit: { requests: 5 } }]);
    await service.setRule({ scope: 'key', id: 'k-3', tokens: 900, period: 'day', rpm: 2 });
    expect(service.scopesFor(request(key))).toEqual([
      tenantMonth,
      { kind: 'key', id: 'k-3', period: 'day', limit: { tokens: 900 } },
      { kind: 'key', id: 'k-3', period: 'minute', limit: { requests: 2 } },
    ]);
    await service.deleteRules('key', 'k-3');
    expect(service.scopesFor(request(key))).toEqual([tenantMonth, { kind: 'key', id: 'k-3', period: 'minute', limit: { requests: 5 } }]);
  });
});
