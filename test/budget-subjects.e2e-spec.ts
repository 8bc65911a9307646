/**
 * Whose counter a call moves (issue 27): the subject scope is keyed by tenant and subject kind, on memory and on
 * real Redis. User u1 of tenant A and user u1 of tenant B, a JWT budget of A/u1 and of B/u1, and an API key and a
 * user that share an id each move a counter of their own.
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { setAuthContext } from '../src/auth/request-context';
import { DEFAULT_CLAIM_MAPPING } from '../src/governance/budgets/budget-claims';
import { createBudgetEngine } from '../src/governance/budgets/budget-engine.factory';
import { BudgetExceededError, RateLimitExceededError } from '../src/governance/budgets/budget-errors';
import { RedisBudgetRuleStore } from '../src/governance/budgets/budget-rule-store';
import { createBudgetRuleStore } from '../src/governance/budgets/budget-rule-store.factory';
import { BudgetsService } from '../src/governance/budgets/budgets.service';
import type { BudgetsSettings, BudgetsStore } from '../src/governance/budgets/budgets-settings';
import { GOVERNANCE_REQUEST_KEY, type GovernanceRequestState, type SubjectKind } from '../src/governance/governance-identity';
import { awayFromMinuteEdge } from './support/timing';
import { dropRedisKeys } from './support/store-cleanup';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `tollgate:test-budget-subjects:${randomUUID()}:`;

afterAll(() => dropRedisKeys(REDIS_URL, keyPrefix));

/** A request as the API auth layer leaves it; a JWT caller's verified payload carries its claims. */
function request(tenant: string, subject: string, subjectKind: SubjectKind, claims?: Record<string, unknown>): object {
  const state: GovernanceRequestState = {
    identity: { tenant, subTenant: null, subject, subjectKind, ...(subjectKind === 'key' ? { keyId: subject } : {}), roles: [] },
    admin: false,
  };
  const request: Record<string, unknown> = { raw: {}, [GOVERNANCE_REQUEST_KEY]: state };
  if (claims) setAuthContext(request, { payload: { sub: subject, ...claims }, userId: subject, tenantId: tenant, pathnameSlugs: [], roleIds: [] });
  return request;
}

const stores: [string, BudgetsStore][] = [
  ['memory', { kind: 'memory' }],
  ['redis', { kind: 'redis', url: REDIS_URL, keyPrefix }],
];

describe.each(stores)('subject counters on %s', (_name, store) => {
  let service: BudgetsService;
  beforeEach(async () => {
    // The docs' own rule: every subject may make one call a minute here (60 in the docs).
    const settings: BudgetsSettings = { store, refreshMs: 1000, rules: { budgets: [], limits: [{ scope: 'subject', id: '*', rpm: 1 }] }, claims: DEFAULT_CLAIM_MAPPING };
    service = new BudgetsService(settings, await createBudgetEngine(store), await createBudgetRuleStore(settings));
  });
  afterEach(() => service.onModuleDestroy());
  const call = (caller: object, tokens = 10) => service.reserve(caller, { micros: 0, tokens });

  it("gives user u1 of tenant A and user u1 of tenant B a counter each under { scope: subject, id: '*', rpm: 1 }", async () => {
    await awayFromMinuteEdge();
    const user = `u-${randomUUID()}`;
    await call(request('tenant-a', user, 'user'));
    await expect(call(request('tenant-a', user, 'user'))).rejects.toBeInstanceOf(RateLimitExceededError);
    await call(request('tenant-b', user, 'user'));
  });

  it("keeps the JWT budget of A/u1 off B/u1's counter", async () => {
    const user = `u-${randomUUID()}`;
    const budget = { budget_tokens: 100, budget_period: 'day', rpm: 100 };
    await call(request('tenant-a', user, 'user', budget), 100);
    await expect(call(request('tenant-a', user, 'user', budget), 1)).rejects.toBeInstanceOf(BudgetExceededError);
    await call(request('tenant-b', user, 'user', budget), 100);
  });

  it('counts an API key and a user with the same id, and a user named api-token and the shared token, apart', async () => {
    await awayFromMinuteEdge();
    const id = randomUUID().replace(/-/g, '').slice(0, 12);
    await call(request('tenant-a', id, 'key'));
    await call(request('tenant-a', id, 'user'));
    const sharedToken = { raw: {}, [GOVERNANCE_REQUEST_KEY]: { identity: { tenant: null, subTenant: null, subject: 'api-token', subjectKind: 'token', roles: [] }, admin: false } };
    await call(sharedToken);
    await call(request('', 'api-token', 'user'));
    await expect(call(sharedToken)).rejects.toBeInstanceOf(RateLimitExceededError);
  });
});

describe('a run-time subject rule stored before subjects were named within their tenant', () => {
  it('is logged once per process as binding no caller, naming the rule and how to set it anew', async () => {
    const prefix = `${keyPrefix}dead:`;
    const redis = new Redis(REDIS_URL);
    await redis.hset(`${prefix}rules`, JSON.stringify(['limit', 'subject', 'u1']), JSON.stringify({ scope: 'subject', id: 'u1', rpm: 5 }));
    await redis.quit();
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const store = new RedisBudgetRuleStore(REDIS_URL, prefix, 60_000);
    try {
      await store.load();
      await store.load();
      const dead = warnings.mock.calls.filter(([message]) => String(message).includes('"u1" binds no caller'));
      expect(dead).toHaveLength(1);
      expect(String(dead[0][0])).toContain('<tenant>/<user>');
    } finally {
      warnings.mockRestore();
      await store.close();
    }
  });
});
