import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { problemsOf } from '../../test/support/config-problems';
import { loadConfig } from './config.loader';

describe('loadConfig', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function write(name: string, text: string): string {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  it('serves built-in defaults when there is no file and no environment', () => {
    const config = loadConfig({ cwd: dir, env: {} });
    expect(config.file).toBeUndefined();
    expect(config.server).toEqual({ port: 3000, host: '127.0.0.1', bodyLimit: 1048576, chatBodyLimit: 20971520, jsonValueLimit: 250_000, basePath: '', shutdownTimeoutMs: 25_000, shutdownGraceMs: 0 });
    expect(config.auth).toBeUndefined();
  });

  it('reads config/tollgate.yaml from the working directory when present', () => {
    write('config/tollgate.yaml', 'version: 1\nserver:\n  port: 4000\n');
    const config = loadConfig({ cwd: dir, env: {} });
    expect(config.file).toBe('config/tollgate.yaml');
    expect(config.server.port).toBe(4000);
  });

  it('prefers --config over TOLLGATE_CONFIG over the default file', () => {
    write('config/tollgate.yaml', 'version: 1\nserver: { port: 4000 }\n');
    write('env.yaml', 'version: 1\nserver: { port: 4001 }\n');
    write('flag.yaml', 'version: 1\nserver: { port: 4002 }\n');
    expect(loadConfig({ cwd: dir, env: { TOLLGATE_CONFIG: 'env.yaml' } }).server.port).toBe(4001);
    expect(loadConfig({ cwd: dir, env: { TOLLGATE_CONFIG: 'env.yaml' }, configPath: 'flag.yaml' }).server.port).toBe(4002);
  });

  it('names the file and the option when a named file is missing', () => {
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'nope.yaml' }))).toEqual([
      'nope.yaml: file not found (named by --config)',
    ]);
    expect(problemsOf(() => loadConfig({ cwd: dir, env: { TOLLGATE_CONFIG: 'gone.yaml' } }))).toEqual([
      'gone.yaml: file not found (named by TOLLGATE_CONFIG)',
    ]);
  });

  it('applies precedence: flags > environment > YAML > defaults', () => {
    write('t.yaml', 'version: 1\nserver:\n  port: 4000\n  host: 10.0.0.1\n  body_limit: 2048\n');
    const env = { PORT: '5000', HOST: '0.0.0.0' };
    const config = loadConfig({
      cwd: dir,
      env,
      configPath: 't.yaml',
      overrides: [{ source: '--port', path: ['server', 'port'], value: '6000' }],
    });
    expect(config.server).toEqual({ port: 6000, host: '0.0.0.0', bodyLimit: 2048, chatBodyLimit: 20971520, jsonValueLimit: 250_000, basePath: '', shutdownTimeoutMs: 25_000, shutdownGraceMs: 0 });
  });

  it('reads server.shutdown_timeout in seconds, TOLLGATE_SHUTDOWN_TIMEOUT above it, and refuses a negative one naming the key', () => {
    write('t.yaml', 'version: 1\nserver:\n  shutdown_timeout: 2.5\n');
    expect(loadConfig({ cwd: dir, env: {}, configPath: 't.yaml' }).server.shutdownTimeoutMs).toBe(2500);
    expect(loadConfig({ cwd: dir, env: { TOLLGATE_SHUTDOWN_TIMEOUT: '0' }, configPath: 't.yaml' }).server.shutdownTimeoutMs).toBe(0);
    expect(() => loadConfig({ cwd: dir, env: { TOLLGATE_SHUTDOWN_TIMEOUT: '-1' }, configPath: 't.yaml' })).toThrow(/server\.shutdown_timeout/);
  });

  it('reads server.shutdown_grace in seconds, TOLLGATE_SHUTDOWN_GRACE above it, and refuses a grace longer than the deadline', () => {
    write('t.yaml', 'version: 1\nserver:\n  shutdown_timeout: 20\n  shutdown_grace: 4.5\n');
    expect(loadConfig({ cwd: dir, env: {}, configPath: 't.yaml' }).server).toMatchObject({ shutdownTimeoutMs: 20_000, shutdownGraceMs: 4500 });
    expect(loadConfig({ cwd: dir, env: { TOLLGATE_SHUTDOWN_GRACE: '20' }, configPath: 't.yaml' }).server.shutdownGraceMs).toBe(20_000);
    expect(() => loadConfig({ cwd: dir, env: { TOLLGATE_SHUTDOWN_GRACE: 'soon' }, configPath: 't.yaml' })).toThrow(/TOLLGATE_SHUTDOWN_GRACE: server\.shutdown_grace/);
    expect(() => loadConfig({ cwd: dir, env: { TOLLGATE_SHUTDOWN_TIMEOUT: '3' }, configPath: 't.yaml' })).toThrow(
      't.yaml: server.shutdown_grace: must be at most server.shutdown_timeout (3 s), since the drain deadline counts from the signal',
    );
  });

  it('lets JWT_SECRET fill auth.jwt_secret and create the auth section', () => {
    const secret = 'x'.repeat(40);
    expect(loadConfig({ cwd: dir, env: { JWT_SECRET: secret } }).auth).toEqual({ jwtSecret: secret });
    write('t.yaml', 'version: 1\nauth:\n  jwt_secret: from-the-file-which-loses-to-the-environment\n');
    expect(loadConfig({ cwd: dir, env: { JWT_SECRET: secret }, configPath: 't.yaml' }).auth?.jwtSecret).toBe(secret);
  });

  it('maps every auth option to its AuthModule name', () => {
    write(
      't.yaml',
      [
        'version: 1',
        'auth:',
        '  jwt_secret_env: MY_SECRET',
        '  jwt_algorithm: HS512',
        '  validate_tenant_id: true',
        '  tenant_id_header_name: X-Org',
        '  validate_subdomain: true',
        '  validate_pathname_slug: true',
        '  pathname_slug_pattern: "^/api/v2/([^/]+)/"',
        '  payload_mapping: { user_id: sub, role_ids: user_roles }',
        '  skip_paths: [/status, "/public/*", "%r{^/docs}"]',
        '  rbac_enabled: true',
        '  rbac_cache_store: redis',
        '  rbac_cache_store_options: { url: "redis://127.0.0.1:6379" }',
        '  permissions_cache_store: memcached',
        '  permissions_cache_store_options: { servers: ["127.0.0.1:11211"] }',
        '  cached_permissions_ttl: 60',
        '  rbac_record_key: perms',
        '  unauthorized_response: { error_message: nope }',
        '  forbidden_response: { error_message: denied }',
        '  response_codes: false',
        '  debug_mode: true',
        '  clock_tolerance: 5',
        '  require_exp: false',
        '  issuer: https://issuer.example',
        '  audience: [a, b]',
        '  trust_proxy: true',
        '  skip_preflight: false',
        '  token_cookie_name: session',
        '  max_token_bytes: 4096',
        '  allow_weak_secret: true',
        '',
      ].join('\n'),
    );
    const auth = loadConfig({ cwd: dir, env: { MY_SECRET: 's3cret' }, configPath: 't.yaml' }).auth;
    expect(auth).toEqual({
      jwtSecret: 's3cret',
      jwtAlgorithm: 'HS512',
      validateTenantId: true,
      tenantIdHeaderName: 'X-Org',
      validateSubdomain: true,
      validatePathnameSlug: true,
      pathnameSlugPattern: '^/api/v2/([^/]+)/',
      payloadMapping: { userId: 'sub', roleIds: 'user_roles' },
      skipPaths: ['/status', '/public/*', '%r{^/docs}'],
      rbacEnabled: true,
      rbacCacheStore: 'redis',
      rbacCacheStoreOptions: { url: 'redis://127.0.0.1:6379' },
      permissionsCacheStore: 'memcached',
      permissionsCacheStoreOptions: { servers: ['127.0.0.1:11211'] },
      cachedPermissionsTtl: 60,
      rbacRecordKey: 'perms',
      // Response bodies keep the user's keys verbatim.
      unauthorizedResponse: { error_message: 'nope' },
      forbiddenResponse: { error_message: 'denied' },
      responseCodes: false,
      debugMode: true,
      clockTolerance: 5,
      requireExp: false,
      issuer: 'https://issuer.example',
      audience: ['a', 'b'],
      trustProxy: true,
      skipPreflight: false,
      tokenCookieName: 'session',
      maxTokenBytes: 4096,
      allowWeakSecret: true,
    });
  });

  it('coerces ${VAR} references to the types the schema asks for', () => {
    write('t.yaml', 'version: 1\nserver:\n  port: ${APP_PORT}\n  host: ${APP_HOST:-::1}\n');
    expect(loadConfig({ cwd: dir, env: { APP_PORT: '8081' }, configPath: 't.yaml' }).server).toMatchObject({
      port: 8081,
      host: '::1',
    });
  });

  it('names the file and key path of every schema error', () => {
    write(
      't.yaml',
      [
        'version: 1',
        'server:',
        '  port: seventy',
        'auth:',
        '  jwt_algorithm: none',
        '  jwt_secrt: abc',
        '  skip_paths: [1, []]',
        '  rbac_cache_store_options: { servers: [localhost] }',
        '',
      ].join('\n'),
    );
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 't.yaml' }))).toEqual(
      expect.arrayContaining([
        't.yaml: server.port: must be an integer',
        't.yaml: auth.jwt_algorithm: must be one of HS256, HS384, HS512, RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512',
        't.yaml: auth.jwt_secrt: unknown key (did you mean jwt_secret?)',
        't.yaml: auth.skip_paths[1]: must be a string',
        't.yaml: auth.rbac_cache_store_options.servers[0]: must be host:port',
      ]),
    );
  });

  it('requires version: 1 and reports unknown top-level sections', () => {
    write('a.yaml', 'server: {}\n');
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'a.yaml' }))).toEqual(['a.yaml: version: is required']);
    write('b.yaml', 'version: 2\nservers: {}\n');
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 'b.yaml' })).sort()).toEqual([
      'b.yaml: servers: unknown key (did you mean server?)',
      'b.yaml: version: must be 1',
    ]);
  });

  it('requires both stores when rbac_enabled is true', () => {
    write('t.yaml', 'version: 1\nauth:\n  rbac_enabled: true\n  rbac_cache_store: redis\n');
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 't.yaml' }))).toEqual([
      't.yaml: auth.permissions_cache_store: is required when rbac_enabled is true',
    ]);
  });

  it('rejects a pathname_slug_pattern that does not compile', () => {
    write('t.yaml', 'version: 1\nauth:\n  pathname_slug_pattern: "^/api/(["\n');
    expect(problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 't.yaml' }))).toEqual([
      't.yaml: auth.pathname_slug_pattern: must be a valid regular expression',
    ]);
  });

  it('reports YAML syntax errors with file, line and column', () => {
    write('t.yaml', 'version: 1\nserver:\n  port: 1\n   host: x\n');
    const [problem] = problemsOf(() => loadConfig({ cwd: dir, env: {}, configPath: 't.yaml' }));
    expect(problem).toBe('t.yaml:3:9: Nested mappings are not allowed in compact mappings');
  });

  it('names the variable, never its value, when an environment value is invalid', () => {
    const problems = problemsOf(() => loadConfig({ cwd: dir, env: { PORT: 'not-a-port-hunter2' } }));
    expect(problems).toEqual(['PORT: server.port: must be an integer']);
    expect(problems.join()).not.toContain('hunter2');
    expect(problemsOf(() => loadConfig({ cwd: dir, env: { PORT: '70000' } }))).toEqual([
      'PORT: server.port: must be <= 65535',
    ]);
  });

  it('names the flag when a command-line value is invalid', () => {
    expect(
      problemsOf(() =>
        loadConfig({ cwd: dir, env: {}, overrides: [{ source: '--host', path: ['server', 'host'], value: '' }] }),
      ),
    ).toEqual(['--host: server.host: must NOT have fewer than 1 characters']);
  });
});
