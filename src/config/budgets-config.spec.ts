import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { problemsOf } from '../../test/support/config-problems';
import { loadConfig } from './config.loader';

describe('governance budgets configuration', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-budgets-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const load = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
    writeFileSync(join(dir, 'tollgate.yaml'), yaml);
    return loadConfig({ cwd: dir, configPath: 'tollgate.yaml', env });
  };

  it('defaults to memory, no rules and no claims', () => {
    expect(load('version: 1\n').budgets).toEqual({ store: { kind: 'memory' }, refreshMs: 1000, rules: { budgets: [], limits: [] } });
  });

  it('maps dollars to micro-dollars, rate rules, the Redis store and the claim mapping', () => {
    const config = load(
      'version: 1\ngovernance:\n  budgets:\n    store: redis\n    url: redis://cache:6379/1\n    refresh: 0.5\n    rules:\n' +
        '      - { scope: tenant, id: "*", usd: 100, period: month }\n      - { scope: key, id: k-1, tokens: 5000, usd: 0.5, period: day }\n' +
        '  limits:\n    rules:\n      - { scope: subject, id: "*", rpm: 60, tpm: 100000 }\n  claims: { budget_usd: tg_budget }\n',
    );
    expect(config.budgets).toEqual({
      store: { kind: 'redis', url: 'redis://cache:6379/1', keyPrefix: 'tollgate:budgets:' },
      refreshMs: 500,
      rules: {
        budgets: [
          { scope: 'tenant', id: '*', period: 'month', micros: 100_000_000 },
          { scope: 'key', id: 'k-1', period: 'day', micros: 500_000, tokens: 5000 },
        ],
        limits: [{ scope: 'subject', id: '*', rpm: 60, tpm: 100_000 }],
      },
      claims: { budgetUsd: 'tg_budget', budgetTokens: 'budget_tokens', budgetPeriod: 'budget_period', rpm: 'rpm', tpm: 'tpm' },
    });
  });

  it.each([
    ['a negative budget', 'budgets: { rules: [{ scope: tenant, id: t, usd: -5, period: day }] }', 'governance.budgets.rules[0].usd'],
    ['a bad period', 'budgets: { rules: [{ scope: tenant, id: t, usd: 5, period: week }] }', 'governance.budgets.rules[0].period'],
    ['a budget without a period', 'budgets: { rules: [{ scope: tenant, id: t, usd: 5 }] }', 'governance.budgets.rules[0]'],
    ['a rule without an amount', 'budgets: { rules: [{ scope: tenant, id: t, period: day }] }', 'governance.budgets.rules[0]: set'],
    ['an unknown scope', 'limits: { rules: [{ scope: team, id: t, rpm: 1 }] }', 'governance.limits.rules[0].scope'],
    ['a fractional rpm', 'limits: { rules: [{ scope: key, id: k, rpm: 1.5 }] }', 'governance.limits.rules[0].rpm'],
    ['a duplicate budget', 'budgets: { rules: [{ scope: key, id: k, usd: 1, period: day }, { scope: key, id: k, tokens: 1, period: day }] }', 'governance.budgets.rules[1]: another rule'],
    ['a Redis store without a URL', 'budgets: { store: redis }', 'governance.budgets.url: is required'],
    ['a URL on the memory store', 'budgets: { url: "redis://x" }', 'governance.budgets.url: applies to store redis only'],
  ])('refuses %s, naming the key', (_label, section, key) => {
    const problems = problemsOf(() => load(`version: 1\ngovernance: { ${section} }\n`));
    expect(problems.join('\n')).toContain(key);
  });
});
