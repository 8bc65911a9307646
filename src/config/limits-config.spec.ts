import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIMITS_OFF } from '../limits/limits-settings';
import { problemsOf } from '../../test/support/config-problems';
import { loadConfig } from './config.loader';

describe('limits configuration', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-limits-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const AUTH = 'auth: { jwt_secret: "0123456789abcdef0123456789abcdef" }\n';
  const load = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
    writeFileSync(join(dir, 'tollgate.yaml'), yaml);
    return loadConfig({ cwd: dir, configPath: 'tollgate.yaml', env });
  };

  it('is off without a limits: section', () => {
    expect(load('version: 1\n').limits).toEqual(LIMITS_OFF);
  });

  it('maps windows to milliseconds, memory by default, Redis with the default key prefix', () => {
    expect(load(`version: 1\n${AUTH}limits: { tenant: { limit: 100, window: 60 }, token: { limit: 5, window: 0.25 } }\n`).limits).toEqual({
      enabled: true,
      store: { kind: 'memory' },
      tenant: { limit: 100, windowMs: 60_000 },
      token: { limit: 5, windowMs: 250 },
      routes: [],
    });
    expect(load('version: 1\nlimits: { store: redis, redis_url: "redis://cache:6379/2", token: { limit: 5, window: 1 } }\n').limits).toEqual({
      enabled: true,
      store: { kind: 'redis', url: 'redis://cache:6379/2', keyPrefix: 'tollgate:limits:' },
      token: { limit: 5, windowMs: 1000 },
      routes: [],
    });
  });

  it('maps route groups in order, prefixing exact and prefix paths with the base path', () => {
    const config = load(
      `version: 1\nserver: { base_path: /gw }\n${AUTH}limits:\n  token: { limit: 100, window: 60 }\n  routes:\n` +
        '    - { name: generation, paths: [/v1/generate, /v1/agent/*, "%r{^/gw/openai/v1/chat}"], token: { limit: 10, window: 60 } }\n' +
        '    - { name: search, paths: [/v1/search], tenant: { limit: 5, window: 1 } }\n',
    );
    expect(config.limits.routes).toEqual([
      { name: 'generation', paths: ['/gw/v1/generate', '/gw/v1/agent/*', '%r{^/gw/openai/v1/chat}'], token: { limit: 10, windowMs: 60_000 } },
      { name: 'search', paths: ['/gw/v1/search'], tenant: { limit: 5, windowMs: 1000 } },
    ]);
    expect(config.limits.enabled).toBe(true);
  });

  it('enabled: false keeps the settings but turns limits off', () => {
    expect(load(`version: 1\n${AUTH}limits: { enabled: false, tenant: { limit: 1, window: 1 } }\n`).limits.enabled).toBe(false);
    expect(load('version: 1\nlimits: { enabled: false }\n').limits.enabled).toBe(false);
  });

  it('reads values from the environment through _env references', () => {
    const config = load('version: 1\nlimits: { store: redis, redis_url_env: LIMITS_REDIS, token: { limit_env: TOKEN_LIMIT, window: 60 } }\n', {
      LIMITS_REDIS: 'rediss://cache:6380',
      TOKEN_LIMIT: '42',
    });
    expect(config.limits.store).toEqual({ kind: 'redis', url: 'rediss://cache:6380', keyPrefix: 'tollgate:limits:' });
    expect(config.limits.token).toEqual({ limit: 42, windowMs: 60_000 });
  });

  it.each([
    ['a limit below 1', 'limits: { token: { limit: 0, window: 1 } }', 'limits.token.limit'],
    ['a fractional limit', 'limits: { token: { limit: 1.5, window: 1 } }', 'limits.token.limit'],
    ['a zero window', 'limits: { token: { limit: 1, window: 0 } }', 'limits.token.window'],
    ['a window over a day', 'limits: { token: { limit: 1, window: 86401 } }', 'limits.token.window'],
    ['a missing window', 'limits: { token: { limit: 1 } }', 'limits.token.window'],
    ['an unknown key', 'limits: { token: { limit: 1, window: 1, burst: 2 } }', 'limits.token.burst'],
    ['an unknown store', 'limits: { store: memcached, token: { limit: 1, window: 1 } }', 'limits.store: must be one of memory, redis'],
    ['a non-redis URL', 'limits: { store: redis, redis_url: "http://cache", token: { limit: 1, window: 1 } }', 'limits.redis_url'],
    ['a route group without paths', 'limits: { routes: [{ name: g, paths: [], token: { limit: 1, window: 1 } }] }', 'limits.routes[0].paths'],
    ['a route group path without a leading slash', 'limits: { routes: [{ name: g, paths: [v1/generate], token: { limit: 1, window: 1 } }] }', 'limits.routes[0].paths[0]'],
    ['a route group name with a colon', 'limits: { routes: [{ name: "a:b", paths: [/v1], token: { limit: 1, window: 1 } }] }', 'limits.routes[0].name'],
  ])('refuses %s, naming the key', (_label, section, key) => {
    expect(problemsOf(() => load(`version: 1\n${section}\n`)).join('\n')).toContain(key);
  });

  it('refuses combinations the schema cannot state, each naming its key', () => {
    expect(problemsOf(() => load('version: 1\nlimits: { store: redis, token: { limit: 1, window: 1 } }\n'))).toEqual([
      'tollgate.yaml: limits.redis_url: is required for store redis',
    ]);
    expect(problemsOf(() => load('version: 1\nlimits: { redis_url: "redis://cache", redis_key_prefix: "x:", token: { limit: 1, window: 1 } }\n'))).toEqual([
      'tollgate.yaml: limits.redis_url: applies to store redis only',
      'tollgate.yaml: limits.redis_key_prefix: applies to store redis only',
    ]);
    expect(problemsOf(() => load('version: 1\nlimits: { tenant: { limit: 1, window: 1 } }\n'))).toEqual([
      'tollgate.yaml: limits.tenant: needs the AuthModule configured (an auth: section or JWT_SECRET)',
    ]);
    expect(problemsOf(() => load(`version: 1\n${AUTH}api: { auth: jwt }\nlimits: { token: { limit: 1, window: 1 } }\n`))).toEqual([
      'tollgate.yaml: limits.token: applies to api.auth token only (api.auth is jwt)',
    ]);
    expect(problemsOf(() => load('version: 1\nlimits: { store: memory }\n'))).toEqual(['tollgate.yaml: limits: set tenant, token, routes or several (or enabled: false)']);
    expect(
      problemsOf(() =>
        load(
          'version: 1\nlimits:\n  routes:\n    - { name: g, paths: ["%r{[}"], tenant: { limit: 1, window: 1 } }\n    - { name: g, paths: [/v1] }\n',
        ),
      ),
    ).toEqual([
      'tollgate.yaml: limits.routes[0].tenant: needs the AuthModule configured (an auth: section or JWT_SECRET)',
      'tollgate.yaml: limits.routes[0].paths[0]: must be a valid regular expression',
      'tollgate.yaml: limits.routes[1]: set tenant, token or both',
      'tollgate.yaml: limits.routes[1].name: "g" names another group too',
    ]);
  });

  it('JWT_SECRET alone configures the AuthModule a tenant limit needs', () => {
    const config = load('version: 1\nlimits: { tenant: { limit: 3, window: 1 } }\n', { JWT_SECRET: '0123456789abcdef0123456789abcdef' });
    expect(config.limits.tenant).toEqual({ limit: 3, windowMs: 1000 });
  });
});
