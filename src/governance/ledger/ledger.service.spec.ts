import type { ModelCallRecord } from '../../ai/client/model-call';
import { MetricsService } from '../../observability/metrics.service';
import { runWithCallContext } from '../call-context';
import type { GovernanceIdentity } from '../governance-identity';
import { LedgerService } from './ledger.service';
import type { LedgerSettings } from './ledger-settings';
import { MemoryLedgerStore } from './memory-ledger-store';
import { buildPricingTable } from './pricing';

const NOW = Date.parse('2026-11-27T10:00:00Z');
const settings: LedgerSettings = {
  enabled: true,
  store: { kind: 'memory', maxEntries: 100 },
  batchSize: 50,
  flushIntervalMs: 3_600_000,
  pricing: buildPricingTable({ 'openai/gpt-4o': { input: 2.5, output: 10, cached_input: 1.25 } }, {}, true),
  metricsMaxTenants: 2,
};

const record = (model = 'gpt-4o'): ModelCallRecord => ({
  provider: 'openai',
  providerKind: 'openai',
  model,
  operation: 'generate',
  status: 'ok',
  usage: { inputTokens: 1000, outputTokens: 100, cachedTokens: 400 },
  estimated: false,
});

const identity = (tenant: string | null): GovernanceIdentity => ({ tenant, subTenant: null, subject: 'k-1', subjectKind: 'key', keyId: 'k-1', roles: [] });

function value(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('LedgerService', () => {
  let metrics: MetricsService;
  let ledger: LedgerService;
  beforeEach(() => {
    metrics = new MetricsService({ enabled: true, token: 'scrape-token' });
    ledger = new LedgerService(settings, new MemoryLedgerStore(100), () => NOW, (provider, model) => provider === 'openai' && model === 'local-model');
  });
  afterEach(async () => {
    metrics.onModuleDestroy();
    await ledger.onApplicationShutdown();
  });

  it('records who called from the call context and what it cost, and reports it before the batch is due', async () => {
    runWithCallContext({ identity: identity('t-1'), requestId: 'r-1', route: '/v1/generate' }, () => ledger.record(record()));
    ledger.record(record('mystery-model'));
    const rows = await ledger.usage({ from: NOW - 1, to: NOW + 1, groupBy: 'key' });
    // 600 uncached × 2.5 + 400 cached × 1.25 + 100 output × 10 = 1500 + 500 + 1000 micro-dollars.
    expect(rows).toEqual([
      { group: 'k-1', calls: 1, inputTokens: 1000, outputTokens: 100, cachedTokens: 400, costMicros: 3000, unpricedCalls: 0, estimatedCalls: 0 },
      { group: null, calls: 1, inputTokens: 1000, outputTokens: 100, cachedTokens: 400, costMicros: 0, unpricedCalls: 1, estimatedCalls: 0 },
    ]);
  });

  it('counts tokens and cost per tenant, provider and model, with tenants past the cap as other', async () => {
    for (const tenant of ['t-1', 't-2', 't-3', 't-4', 't-1']) runWithCallContext({ identity: identity(tenant) }, () => ledger.record(record()));
    ledger.record(record('mystery-model'));
    const text = await metrics.render();
    expect(value(text, 'tollgate_ledger_tokens_total{tenant="t-1",provider="openai",model="gpt-4o",type="input"}')).toBe(2000);
    expect(value(text, 'tollgate_ledger_tokens_total{tenant="t-2",provider="openai",model="gpt-4o",type="cached"}')).toBe(400);
    expect(value(text, 'tollgate_ledger_tokens_total{tenant="other",provider="openai",model="gpt-4o",type="output"}')).toBe(200);
    expect(value(text, 'tollgate_ledger_cost_usd_total{tenant="t-1",provider="openai",model="gpt-4o"}')).toBeCloseTo(0.006, 9);
    expect(value(text, 'tollgate_ledger_unpriced_calls_total{tenant="none",provider="openai",model="other"}')).toBe(1);
    expect(value(text, 'tollgate_ledger_calls_total{tenant="other",provider="openai",model="gpt-4o",status="ok"}')).toBe(2);
    expect(text).not.toContain('tenant="t-3"');
  });

  it('labels only the models the configuration or the price table names; junk names of one tenant take no place from the others', async () => {
    runWithCallContext({ identity: identity('t-1') }, () => {
      for (let i = 0; i < 500; i++) ledger.record(record(`junk-${i}`));
    });
    runWithCallContext({ identity: identity('t-2') }, () => {
      ledger.record(record('gpt-4o'));
      ledger.record(record('GPT-4o-2024-08-06'));
      ledger.record(record('local-model'));
    });
    const text = await metrics.render();
    expect(value(text, 'tollgate_ledger_calls_total{tenant="t-1",provider="openai",model="other",status="ok"}')).toBe(500);
    // A dated snapshot of a priced model counts under the priced name.
    expect(value(text, 'tollgate_ledger_calls_total{tenant="t-2",provider="openai",model="gpt-4o",status="ok"}')).toBe(2);
    expect(value(text, 'tollgate_ledger_calls_total{tenant="t-2",provider="openai",model="local-model",status="ok"}')).toBe(1);
    expect(text).not.toContain('junk-');
    // The ledger itself keeps every name exactly.
    const byModel = await ledger.usage({ from: NOW - 1, to: NOW + 1, groupBy: 'model' });
    expect(byModel.map((row) => row.group)).toEqual(expect.arrayContaining(['openai/junk-499', 'openai/GPT-4o-2024-08-06', 'openai/local-model']));
  });

  it('sums the ledger over every tenant as tenant="all" on a /metrics without a token', async () => {
    const open = new MetricsService();
    try {
      for (const tenant of ['t-1', 't-2', null]) runWithCallContext({ identity: identity(tenant) }, () => ledger.record(record()));
      const text = await open.render();
      expect(value(text, 'tollgate_ledger_calls_total{tenant="all",provider="openai",model="gpt-4o",status="ok"}')).toBe(3);
      expect(value(text, 'tollgate_ledger_tokens_total{tenant="all",provider="openai",model="gpt-4o",type="input"}')).toBe(3000);
      expect(text).not.toMatch(/tenant="(t-1|t-2|none)"/);
    } finally {
      open.onModuleDestroy();
    }
  });

  it('drops and counts what is recorded after shutdown', async () => {
    await ledger.onApplicationShutdown();
    ledger.record(record());
    expect(ledger.dropped).toBe(1);
  });
});
