import {
  type ApiKeyRecord,
  applyKeyChanges,
  cliFieldLabel,
  keyInactiveReason,
  parseDuration,
  publicKeyView,
  restFieldLabel,
  validateKeySpec,
} from './api-key-record';

const NOW = Date.parse('2026-01-10T12:00:00Z');

describe('parseDuration', () => {
  it.each([
    ['30d', 30 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['90m', 90 * 60_000],
    ['2w', 14 * 86_400_000],
    ['45s', 45_000],
    ['3650d', 3650 * 86_400_000],
  ])('%s', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['30', 'd', '0d', '-1d', '1.5d', '30x', '30 d', '3651d', '30D', ''])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('validateKeySpec (create)', () => {
  const create = (spec: Record<string, unknown>) => validateKeySpec(spec, 'create', NOW, cliFieldLabel);

  it('accepts every field and converts dollars and durations', () => {
    const result = create({
      tenant: 't-1',
      subTenant: 'north',
      name: 'ci',
      models: ['openai/*', 'anthropic/claude-*', 'openai/*'],
      budgetUsd: 5.25,
      period: 'day',
      rpm: 60,
      tpm: 100000,
      expires: '30d',
    });
    expect(result.problems).toEqual([]);
    expect(result.settings).toEqual({
      tenant: 't-1',
      subTenant: 'north',
      name: 'ci',
      models: ['openai/*', 'anthropic/claude-*'],
      budget: { microUsd: 5_250_000, period: 'day' },
      rpm: 60,
      tpm: 100000,
      expiresAt: '2026-02-09T12:00:00.000Z',
    });
  });

  it('accepts a token budget', () => {
    expect(create({ tenant: 't', budgetTokens: 1000, period: 'month' }).settings.budget).toEqual({ tokens: 1000, period: 'month' });
  });

  it.each([
    [{}, '--tenant: is required'],
    [{ tenant: 'bad tenant' }, '--tenant: must be 1-128 letters, digits or . _ : @ -'],
    [{ tenant: 't', budgetUsd: -5, period: 'day' }, '--budget-usd: must be a positive amount of dollars (got -5)'],
    [{ tenant: 't', budgetUsd: 0, period: 'day' }, '--budget-usd: must be a positive amount of dollars (got 0)'],
    [{ tenant: 't', budgetUsd: Number.NaN, period: 'day' }, '--budget-usd: must be a positive amount of dollars (got NaN)'],
    [{ tenant: 't', budgetTokens: 1.5, period: 'day' }, '--budget-tokens: must be a positive integer (got 1.5)'],
    [{ tenant: 't', budgetUsd: 5 }, '--period: is required with a budget (day or month)'],
    [{ tenant: 't', budgetUsd: 5, period: 'week' }, '--period: must be day or month (got "week")'],
    [{ tenant: 't', period: 'day' }, '--period: applies to a budget only (set --budget-usd or --budget-tokens)'],
    [{ tenant: 't', budgetUsd: 5, budgetTokens: 5, period: 'day' }, '--budget-usd: set either --budget-usd or --budget-tokens, not both'],
    [{ tenant: 't', models: ['openai'] }, '--models[0]: "openai" must be provider/model (e.g. openai/* or anthropic/claude-*)'],
    [{ tenant: 't', models: [] }, '--models: must name at least one provider/model glob'],
    [{ tenant: 't', models: 'openai/*' }, '--models: must be a list of provider/model globs'],
    [{ tenant: 't', rpm: 0 }, '--rpm: must be a positive integer (got 0)'],
    [{ tenant: 't', tpm: -1 }, '--tpm: must be a positive integer (got -1)'],
    [{ tenant: 't', expires: '30x' }, '--expires: must be a duration such as 30d, 12h, 90m, 2w or 45s, up to 3650d (got "30x")'],
    [{ tenant: 't', name: '' }, '--name: must be 1-100 letters, digits, spaces or . _ : @ + -'],
  ])('refuses %j', (spec, problem) => {
    expect(create(spec).problems).toEqual([problem]);
  });

  it('reports every problem at once, spelled as the REST API names the fields', () => {
    const result = validateKeySpec({ budgetUsd: -1, period: 'year', subTenant: 'x' }, 'create', NOW, restFieldLabel);
    expect(result.problems).toEqual([
      'tenant: is required',
      'budget_usd: must be a positive amount of dollars (got -1)',
      'period: must be day or month (got "year")',
    ]);
  });
});

describe('validateKeySpec (update)', () => {
  const update = (spec: Record<string, unknown>) => validateKeySpec(spec, 'update', NOW, restFieldLabel);

  it('clears settings given as null and keeps absent ones', () => {
    const result = update({ models: null, budgetUsd: null, rpm: 10 });
    expect(result.problems).toEqual([]);
    expect(result.settings).toEqual({ models: undefined, budget: undefined, rpm: 10 });
    expect(Object.keys(result.settings).sort()).toEqual(['budget', 'models', 'rpm']);
  });

  it('refuses changing the tenant or sub-tenant', () => {
    expect(update({ tenant: 't-2', subTenant: 's' }).problems).toEqual([
      'tenant: cannot be changed; create a new key instead',
      'sub_tenant: cannot be changed; create a new key instead',
    ]);
  });
});

describe('key records', () => {
  const record: ApiKeyRecord = {
    id: 'ab12cd34ef56',
    tenant: 't-1',
    models: ['openai/*'],
    budget: { microUsd: 1_500_000, period: 'month' },
    rpm: 5,
    createdAt: '2026-01-01T00:00:00.000Z',
    hash: 'f'.repeat(64),
  };

  it('applies changes, clearing undefined settings', () => {
    expect(applyKeyChanges(record, { models: undefined, rpm: 7, name: 'x' })).toEqual({ ...withoutModels(record), rpm: 7, name: 'x' });
  });

  it('knows revoked and expired keys', () => {
    expect(keyInactiveReason(record, NOW)).toBeUndefined();
    expect(keyInactiveReason({ ...record, expiresAt: '2026-01-10T12:00:00.000Z' }, NOW)).toBe('expired');
    expect(keyInactiveReason({ ...record, expiresAt: '2026-01-10T12:00:01.000Z' }, NOW)).toBeUndefined();
    expect(keyInactiveReason({ ...record, revokedAt: '2026-01-02T00:00:00.000Z' }, NOW)).toBe('revoked');
  });

  it('shows dollars and never the hash', () => {
    const view = publicKeyView(record, NOW);
    expect(view.budget).toEqual({ period: 'month', usd: 1.5 });
    expect(view.status).toBe('active');
    expect(JSON.stringify(view)).not.toContain(record.hash);
  });
});

function withoutModels(record: ApiKeyRecord): ApiKeyRecord {
  const { models: _models, ...rest } = record;
  return rest;
}
