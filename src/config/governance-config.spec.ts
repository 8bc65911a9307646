import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GOVERNANCE_DEFAULTS } from '../governance/governance-settings';
import { problemsOf } from '../../test/support/config-problems';
import { loadConfig } from './config.loader';

describe('governance configuration (keys slice)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-governance-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const load = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
    writeFileSync(join(dir, 'tollgate.yaml'), yaml);
    return loadConfig({ cwd: dir, configPath: 'tollgate.yaml', env });
  };

  it('defaults to a memory key store, no admin or operator role and no allow-list', () => {
    expect(load('version: 1\n').governance).toEqual(GOVERNANCE_DEFAULTS);
    expect(GOVERNANCE_DEFAULTS).toMatchObject({ adminRoles: [], operatorRoles: [] });
  });

  it('maps the Redis and PostgreSQL stores with their default prefix and table', () => {
    expect(load('version: 1\ngovernance: { keys: { store: redis, url: "redis://127.0.0.1:6379" } }\n').governance.keys).toEqual({
      kind: 'redis',
      url: 'redis://127.0.0.1:6379',
      keyPrefix: 'tollgate:keys:',
    });
    expect(load('version: 1\ngovernance: { keys: { store: postgres, url: "postgres://db/x", table: keys_t } }\n').governance.keys).toEqual({
      kind: 'postgres',
      url: 'postgres://db/x',
      table: 'keys_t',
    });
  });

  it('maps the admin token (also from TOLLGATE_ADMIN_TOKEN), admin and operator roles and allow-lists', () => {
    const yaml = 'version: 1\ngovernance:\n  admin_roles: [ops]\n  operator_roles: [platform]\n  models:\n    tenants: { t-1: ["openai/*"] }\n    roles: { analyst: ["anthropic/claude-*"] }\n';
    const governance = load(yaml, { TOLLGATE_ADMIN_TOKEN: 'admin-token-0123456789' }).governance;
    expect(governance).toEqual({
      keys: { kind: 'memory' },
      adminToken: 'admin-token-0123456789',
      adminRoles: ['ops'],
      operatorRoles: ['platform'],
      models: { tenants: { 't-1': ['openai/*'] }, roles: { analyst: ['anthropic/claude-*'] } },
    });
  });

  it.each([
    ['governance: { keys: { store: redis } }', 'governance.keys.url: is required for store redis'],
    ['governance: { keys: { store: postgres, url: "redis://x" } }', 'governance.keys.url: must be a postgres:// URL for store postgres'],
    ['governance: { keys: { url: "redis://x" } }', 'governance.keys.url: applies to store redis or postgres only'],
    ['governance: { keys: { store: redis, url: "redis://x", table: t } }', 'governance.keys.table: applies to store postgres only'],
    ['governance: { keys: { key_prefix: "p:" } }', 'governance.keys.key_prefix: applies to store redis only'],
    ['governance: { models: { tenants: { t-1: ["openai"] } } }', 'governance.models.tenants.t-1[0]: "openai" must be provider/model (e.g. openai/* or anthropic/claude-*)'],
    ['governance: { models: { roles: { a: ["openai/*", "x/ y"] } } }', 'governance.models.roles.a[1]: "x/ y" may hold only letters, digits, . _ : @ + - / and *'],
    ['governance: { admin_token: "tg_0123456789abcdef" }', 'governance.admin_token: must not start with tg_ (reserved for API keys)'],
    ['api: { token: "tg_0123456789abcdef" }', 'api.token: must not start with tg_ (reserved for API keys)'],
    ['api: { token: "same-token-0123456789" }\ngovernance: { admin_token: "same-token-0123456789" }', 'governance.admin_token: must differ from api.token'],
  ])('refuses %s', (section, problem) => {
    expect(problemsOf(() => load(`version: 1\n${section}\n`))).toEqual([`tollgate.yaml: ${problem}`]);
  });

  it('refuses schema violations naming the key', () => {
    const problems = problemsOf(() => load('version: 1\ngovernance: { keys: { store: memcached } }\n'));
    expect(problems.join('\n')).toContain('governance.keys.store');
  });
});
