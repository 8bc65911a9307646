import { ModelAllowList } from './allow-lists/model-allow-list';
import { createBudgetEngine } from './budgets/budget-engine.factory';
import { MemoryBudgetRuleStore } from './budgets/budget-rule-store';
import { BudgetsService } from './budgets/budgets.service';
import type { BudgetsSettings } from './budgets/budgets-settings';
import { runWithCallContext } from './call-context';
import type { GateOutcome } from '../ai/client/model-call-gate';
import { DEFAULT_OUTPUT_ESTIMATE, GovernanceGate, type GovernanceGateOptions, LEAST_BOUNDED_OUTPUT } from './governance-gate';
import type { GovernanceRequestState } from './governance-identity';
import { GOVERNANCE_DEFAULTS } from './governance-settings';
import { setGovernance, stateForKey } from './governance-state';
import type { ApiKeyRecord } from './keys/api-key-record';
import { buildPricingTable } from './ledger/pricing';

const pricing = buildPricingTable({}, { 'openai/gpt-priced': { input: 1, output: 2 } }, false);

function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return { id: 'k1', name: 'test', tenant: 't-1', hash: 'h', createdAt: '2026-11-27T00:00:00.000Z', ...overrides };
}

async function gateWith(rules: BudgetsSettings['rules'], models = GOVERNANCE_DEFAULTS.models, options: GovernanceGateOptions = {}) {
  const settings: BudgetsSettings = { store: { kind: 'memory' }, refreshMs: 1000, rules };
  const budgets = new BudgetsService(settings, await createBudgetEngine(settings.store), new MemoryBudgetRuleStore());
  const allowList = new ModelAllowList({ ...GOVERNANCE_DEFAULTS, models });
  return new GovernanceGate(allowList, pricing, budgets, options);
}

/** Runs `fn` as a request of the caller `state` would: the call context its request scope gives. A refusal rejects. */
function asCaller<T>(state: GovernanceRequestState, fn: () => T | Promise<T>, headers: Record<string, string> = {}): Promise<T> {
  const request = { id: 'req-1' };
  setGovernance(request, state);
  const setResponseHeader = (name: string, value: string) => void (headers[name] = value);
  return runWithCallContext({ identity: state.identity, state, request, setResponseHeader }, async () => fn());
}

const answered = (inputTokens: number, outputTokens: number, model = 'gpt-priced'): GateOutcome => ({
  sent: true,
  answered: { provider: 'openai', providerKind: 'openai', model, usage: usage(inputTokens, outputTokens), estimated: false },
  unanswered: [],
});
const nothingSent: GateOutcome = { sent: false, unanswered: [] };
const cutOff: GateOutcome = { sent: true, unanswered: [{ provider: 'openai', providerKind: 'openai', model: 'gpt-priced' }] };
const settled = () => new Promise((done) => setImmediate(done));

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
    ticket!.close(answered(10, 5));
    await new Promise((settled) => setImmediate(settled));
    await expect(asCaller(state, () => gate.open(call('gpt-priced', 75)))).resolves.toBeDefined();
    await new Promise((settled) => setImmediate(settled));
    // 10 still free: less than 10 input and the least output a budget bounds a call to.
    await expect(asCaller(state, () => gate.open(call()))).rejects.toMatchObject({ type: 'budget_exceeded' });
  });

  it('a call that sent no request upstream gives its tokens back, but its request stays counted', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const state = stateForKey(keyRecord({ budget: { period: 'day', tokens: 50 }, rpm: 2 }));
    const ticket = await asCaller(state, () => gate.open(call('gpt-priced', 40)));
    ticket!.close(nothingSent);
    await settled();
    // The 50 tokens are back: a second call of 40 fits again.
    const second = await asCaller(state, () => gate.open(call('gpt-priced', 40)));
    second!.close(nothingSent);
    await settled();
    // The first call's request still counts: a third is past the RPM of 2.
    await expect(asCaller(state, () => gate.open(call('gpt-priced', 1)))).rejects.toMatchObject({ type: 'rate_limited' });
  });

  it('a call that went upstream and got no answer keeps its request and is charged at least its estimate', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const state = stateForKey(keyRecord({ budget: { period: 'day', tokens: 100 }, rpm: 2 }));
    const ticket = await asCaller(state, () => gate.open(call('gpt-priced', 40)));
    ticket!.close(cutOff);
    await settled();
    // 50 charged: 50 left fits one more such call; cut after 70 measured output tokens, it is charged 80, past the budget.
    const second = await asCaller(state, () => gate.open(call('gpt-priced', 40)));
    second!.close({ sent: true, unanswered: [{ provider: 'openai', providerKind: 'openai', model: 'gpt-priced', measured: usage(10, 70) }] });
    await settled();
    await expect(asCaller(state, () => gate.open(call('gpt-priced', 1)))).rejects.toThrow(/^The daily token budget of key k1 \(100 tokens\) is spent/);
  });

  it('an answer the upstream refused with an error status costs no tokens but keeps its request', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const state = stateForKey(keyRecord({ budget: { period: 'day', tokens: 50 }, rpm: 1 }));
    const ticket = await asCaller(state, () => gate.open(call('gpt-priced', 40)));
    ticket!.close({ sent: true, unanswered: [] });
    await settled();
    await expect(asCaller(state, () => gate.open(call('gpt-priced', 40)))).rejects.toMatchObject({ type: 'rate_limited' });
  });

  it('bounds a call\'s output by what the budget has left, says so, and refuses only when not even a minimal call fits', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const state = stateForKey(keyRecord({ budget: { period: 'day', tokens: 500 } }));
    // Without max_tokens: 10 input and up to 1,024 output, of which 490 fit.
    const headers: Record<string, string> = {};
    const ticket = await asCaller(state, () => gate.open(call()), headers);
    expect(ticket!.maxOutputTokens).toBe(490);
    expect(headers).toEqual({ 'x-budget-max-tokens': '490' });
    ticket!.close(answered(10, 470));
    await settled();
    // 20 left: 10 input and 10 output would fit, but fewer than LEAST_BOUNDED_OUTPUT is refused, as estimate.
    expect(LEAST_BOUNDED_OUTPUT).toBe(16);
    const refused = await asCaller(state, () => gate.open(call())).catch((error: Error) => error);
    expect(refused).toMatchObject({ type: 'budget_exceeded' });
    expect((refused as Error).message).toMatch(/^This call's estimate \(26 tokens\) is more than the 20 left of the daily token budget of key k1 \(500 tokens\).*fewest output tokens a call is granted \(16/);
    // A call that asks for less than what is left keeps its own max_tokens, and no header is set.
    const small: Record<string, string> = {};
    const fits = await asCaller(state, () => gate.open(call('gpt-priced', 5)), small);
    expect(fits!.maxOutputTokens).toBeUndefined();
    expect(small).toEqual({});
    fits!.close(answered(10, 10));
    await settled();
    const spent = await asCaller(state, () => gate.open(call('gpt-priced', 1))).catch((error: Error) => error);
    expect((spent as Error).message).toMatch(/^The daily token budget of key k1 \(500 tokens\) is spent; it resets at /);
    expect(DEFAULT_OUTPUT_ESTIMATE).toBe(1024);
  });

  it('charges an answer under an unpriced model name at the price the call was reserved at, never at nothing', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    // 100 micro-dollars; gpt-priced is $1/M input and $2/M output, so 40 input and 30 output cost 100.
    const state = stateForKey(keyRecord({ budget: { period: 'day', microUsd: 100 } }));
    const ticket = await asCaller(state, () => gate.open(call('gpt-priced', 5)));
    ticket!.close(answered(40, 30, 'gpt-priced-served-name'));
    await settled();
    const spent = await asCaller(state, () => gate.open(call('gpt-priced', 1))).catch((error: Error) => error);
    expect((spent as Error).message).toMatch(/is spent/);
  });

  it('sends a caller held to tokens or dollars that gave no max_tokens the default as its bound; a caller held to requests only, none', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    const headers: Record<string, string> = {};
    const tokens = await asCaller(stateForKey(keyRecord({ budget: { period: 'day', tokens: 1_000_000 } })), () => gate.open(call()), headers);
    expect(tokens!.maxOutputTokens).toBe(DEFAULT_OUTPUT_ESTIMATE);
    expect(headers).toEqual({ 'x-budget-max-tokens': String(DEFAULT_OUTPUT_ESTIMATE) });
    const asked = await asCaller(stateForKey(keyRecord({ id: 'k2', budget: { period: 'day', tokens: 1_000_000 } })), () => gate.open(call('gpt-priced', 4_000)));
    expect(asked!.maxOutputTokens).toBeUndefined();
    const requestsOnly: Record<string, string> = {};
    const rpm = await asCaller(stateForKey(keyRecord({ id: 'k3', rpm: 10 })), () => gate.open(call()), requestsOnly);
    expect(rpm!.maxOutputTokens).toBeUndefined();
    expect(requestsOnly).toEqual({});
  });

  it('bounds output by dollars at the model\'s output price', async () => {
    const gate = await gateWith({ budgets: [], limits: [] });
    // 10 input at $1/M is 10 micro-dollars; 90 left at $2/M of output covers 45 tokens.
    const state = stateForKey(keyRecord({ budget: { period: 'day', microUsd: 100 } }));
    const ticket = await asCaller(state, () => gate.open(call()));
    expect(ticket!.maxOutputTokens).toBe(45);
  });

  it('refuses an unpriced model to a caller held to a dollar budget, unless the operator admits unpriced models', async () => {
    const refusing = await gateWith({ budgets: [], limits: [] });
    const dollars = stateForKey(keyRecord({ budget: { period: 'day', microUsd: 1_000 } }));
    await expect(asCaller(dollars, () => refusing.open(call('gpt-unpriced')))).rejects.toMatchObject({
      type: 'model_not_priced',
      message: expect.stringMatching(/openai\/gpt-unpriced has no price.*governance\.pricing\.models/),
    });
    await asCaller(dollars, async () => expect(refusing.admits('openai', 'gpt-unpriced', 'openai')).toBe(false));
    // A caller held to tokens only is not refused: its tokens are counted.
    const tokens = stateForKey(keyRecord({ id: 'k2', budget: { period: 'day', tokens: 5_000 } }));
    await expect(asCaller(tokens, () => refusing.open(call('gpt-unpriced')))).resolves.toBeDefined();
    const admitting = await gateWith({ budgets: [], limits: [] }, GOVERNANCE_DEFAULTS.models, { allowUnpriced: true });
    await expect(asCaller(dollars, () => admitting.open(call('gpt-unpriced')))).resolves.toBeDefined();
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
      expect(gate.admits('openai', 'gpt-priced', 'openai')).toBe(true);
      expect(gate.admits('anthropic', 'claude-x', 'anthropic')).toBe(false);
    });
  });
});
