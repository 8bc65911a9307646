import { ModelNotAllowedError } from '../governance-errors';
import type { GovernanceRequestState } from '../governance-identity';
import { GOVERNANCE_DEFAULTS, type GovernanceSettings } from '../governance-settings';
import { API_TOKEN_STATE, stateForKey } from '../governance-state';
import { ModelAllowList, allowedModelsFor, isModelAllowed } from './model-allow-list';

const settings: GovernanceSettings = {
  ...GOVERNANCE_DEFAULTS,
  models: {
    tenants: { 't-1': ['openai/*', 'anthropic/*'] },
    roles: { analyst: ['openai/gpt-4o-mini'], researcher: ['anthropic/claude-*'] },
  },
};

function user(tenant: string | null, roles: string[]): GovernanceRequestState {
  return { identity: { tenant, subTenant: null, subject: 'u-1', subjectKind: 'user', roles }, admin: false };
}

const key = (models?: string[]) =>
  stateForKey({ id: 'ab12cd34ef56', tenant: 't-1', createdAt: '2026-01-01T00:00:00.000Z', hash: 'f'.repeat(64), ...(models ? { models } : {}) });

const allowed = (state: GovernanceRequestState, name: string) => {
  const [provider, ...model] = name.split('/');
  return isModelAllowed(allowedModelsFor(state, settings), provider, model.join('/'));
};

describe('model allow-lists', () => {
  it('allows everything when no list applies', () => {
    expect(allowedModelsFor(API_TOKEN_STATE, settings)).toEqual([]);
    expect(allowed(user('t-2', ['viewer']), 'mistral/large')).toBe(true);
  });

  it('applies the tenant list', () => {
    expect(allowed(user('t-1', []), 'openai/gpt-4o')).toBe(true);
    expect(allowed(user('t-1', []), 'mistral/large')).toBe(false);
  });

  it('intersects the tenant list with the key list', () => {
    expect(allowed(key(['openai/gpt-4o*', 'mistral/*']), 'openai/gpt-4o-mini')).toBe(true);
    // The key allows mistral but its tenant does not.
    expect(allowed(key(['openai/gpt-4o*', 'mistral/*']), 'mistral/large')).toBe(false);
    expect(allowed(key(['openai/gpt-4o*']), 'anthropic/claude-3')).toBe(false);
    expect(allowed(key(), 'anthropic/claude-3')).toBe(true);
  });

  it('unites the lists of the caller roles, then intersects them with the tenant list', () => {
    const both = user('t-1', ['analyst', 'researcher', 'viewer']);
    expect(allowed(both, 'openai/gpt-4o-mini')).toBe(true);
    expect(allowed(both, 'anthropic/claude-3')).toBe(true);
    expect(allowed(both, 'openai/gpt-4o')).toBe(false);
    expect(allowed(user(null, ['analyst']), 'openai/gpt-4o-mini')).toBe(true);
    expect(allowed(user(null, ['analyst']), 'anthropic/claude-3')).toBe(false);
  });

  it('finds nothing for tenants or roles named like Object properties', () => {
    expect(allowedModelsFor(user('constructor', ['__proto__', 'toString']), settings)).toEqual([]);
  });

  it('throws model_not_allowed naming the model, and lets requests without governance state through', () => {
    const list = new ModelAllowList(settings);
    expect(() => list.checkModelAllowed(user('t-1', []), 'mistral', 'large')).toThrow(new ModelNotAllowedError('mistral/large'));
    try {
      list.checkModelAllowed(user('t-1', []), 'mistral', 'large');
    } catch (error) {
      expect((error as ModelNotAllowedError).type).toBe('model_not_allowed');
    }
    expect(() => list.checkModelAllowed(user('t-1', []), 'openai', 'gpt-4o')).not.toThrow();
    expect(() => list.checkModelAllowed(undefined, 'mistral', 'large')).not.toThrow();
  });
});
