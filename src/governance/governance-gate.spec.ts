import { ModelAllowList } from './allow-lists/model-allow-list';
import { createBudgetEngine } from './budgets/budget-engine.factory';
import { MemoryBudgetRuleStore } from './budgets/budget-rule-store';
import { BudgetsService } from './budgets/budgets.service';
import type { BudgetsSettings } from './budgets/budgets-settings';
import { runWithCallContext } from './call-context';
import { GovernanceGate } from './governance-gate';
import type { GovernanceRequestState } from './governance-identity';
import { GOVERNANCE_DEFAULTS } from './governance-settings';
import { setGovernance, stateForKey } from './governance-state';
import type { ApiKeyRecord } from './keys/api-key-record';
import { buildPricingTable } from './ledger/pricing';

const pricing = buildPricingTable({}, { 'openai/gpt-priced': { input: 1, output: 2 } }, false);

function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return { id: 'k1', name: 'test', tenant: 't-1', hash: 'h', createdAt: '2026-11-27T00:00:00.000Z', ...overrides };
}

async function gateWith(rules: BudgetsSettings['rules'], models = GOVERNANCE_DEFAULTS.models) {
  const settings: BudgetsSettings = { store: { kind: 'memory' }, refreshMs: 1000, rules };
  const budgets = new BudgetsService(settings, await createBudgetEngine(settings.store), new MemoryBudgetRuleStore());
  const allowList = new ModelAllowList({ ...GOVERNANCE_DEFAULTS, models });
  return new GovernanceGate(allowList, pricing, budgets);
}

/** Runs `fn` as a request of the caller `state` would: the call context its request scope gives. A refusal rejects. */
function asCaller<T>(state: GovernanceRequestState, fn: () => T | Promise<T>): Promise<T> {
  const request = { id: 'req-1' };
  setGovernance(request, state);
  return runWithCallContext({ identity: state.identity, state, request }, async () => fn());
}

const call = (model = 'gpt-priced', maxOutputTokens?: number) => ({
  provider: 'openai',
  providerKind: 'openai' as const,
  model,
  operation: 'generate' as const,
  estimateInputTokens: () => 10,
  ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
});
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens, cachedTokens: 0 });

describe('GovernanceGate', () => {
  it("counts a listing as one request against the caller's RPM, and nothing outside a call context", async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const state = stateForKey(keyRecord({ rpm: 2 }));
    await asCaller(state, () => gate.countRequest());
    await asCaller(state, () => gate.countRequest());
    await expect(asCaller(state, () => gate.countRequest())).rejects.toMatchObject({ type: 'rate_limited', field: 'requests' });
    expect(gate.countRequest()).toBeUndefined();
  });

  it('passes calls outside a call context untouched (CLI, in-process use)', async () => {
    const gate = await gateWith({ budgets: [{ scope: 'key', id: '*', period: 'day', tokens: 1 }], limits: [] });
    expect(gate.open(call())).toBeUndefined();
  });

  it('a caller without any budget or limit gets no ticket, at once (no promise to await)', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const estimated = jest.fn(() => 10);
    // Wrapped, so that a promise returned by open would be seen as one.
    const { opened } = await asCaller(stateForKey(keyRecord()), () => ({ opened: gate.open({ ...call(), estimateInputTokens: estimated }) }));
    expect(opened).toBeUndefined();
    expect(estimated).not.toHaveBeenCalled();
  });

  it('reserves max_tokens (or the default) plus the input estimate, and settles to the real tokens', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const state = stateForKey(keyRecord({ budget: { period: 'day', tokens: 100 } }));
    // 10 input + 80 output reserved: a second such call does not fit in 100.
    const ticket = await asCaller(state, () => gate.open(call('gpt-priced', 80)));
    await expect(asCaller(state, () => gate.open(call('gpt-priced', 80)))).rejects.toMatchObject({ type: 'budget_exceeded' });
    // Settled to 15 tokens: 85 left, so 10 + 75 fits exactly.
    ticket!.close({ provider: 'openai', providerKind: 'openai', model: 'gpt-priced', usage: usage(10, 5) });
    await new Promise((settled) => setImmediate(settled));
    await expect(asCaller(state, () => gate.open(call('gpt-priced', 75)))).resolves.toBeDefined();
    await new Promise((settled) => setImmediate(settled));
    // Without max_tokens the estimate is 10 + DEFAULT_OUTPUT_ESTIMATE tokens, more than the 10 still free.
    await expect(asCaller(state, () => gate.open(call()))).rejects.toMatchObject({ type: 'budget_exceeded' });
  });

  it('a call no model answered gives its reservation back', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const state = stateForKey(keyRecord({ budget: { period: 'day', tokens: 50 } }));
    const ticket = await asCaller(state, () => gate.open(call('gpt-priced', 40)));
    ticket!.close(undefined);
    await new Promise((released) => setImmediate(released));
    await expect(asCaller(state, () => gate.open(call('gpt-priced', 40)))).resolves.toBeDefined();
  });

  it('dollar budgets count priced calls in micro-dollars', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    // $0.000100: 10 input at $1/M and 40 output at $2/M is 10 + 80 = 90 micro-dollars; a second one passes 100.
    const state = stateForKey(keyRecord({ budget: { period: 'month', microUsd: 100 } }));
    await asCaller(state, () => gate.open(call('gpt-priced', 40)));
    await expect(asCaller(state, () => gate.open(call('gpt-priced', 40)))).rejects.toMatchObject({ type: 'budget_exceeded' });
  });

  it('refuses a model outside the allow-lists before reserving, and tells fallback which candidates it admits', async () => {
    const gate = await gateWith({ budgets: [], limits: [] }, { tenants: { 't-1': ['openai/gpt-priced'] }, roles: {} });
    const state = stateForKey(keyRecord());
    await expect(asCaller(state, () => gate.open(call('gpt-other')))).rejects.toMatchObject({ type: 'model_not_allowed' });
    await asCaller(state, async () => {
      expect(gate.admits('openai', 'gpt-priced')).toBe(true);
      expect(gate.admits('anthropic', 'claude-x')).toBe(false);
    });
  });
});
