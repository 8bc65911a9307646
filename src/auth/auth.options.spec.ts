import { createSecretKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import type { AuthModuleOptions } from './auth-module-options.interface';
import {
  AuthOptionsError,
  DEFAULT_FORBIDDEN_RESPONSE,
  DEFAULT_UNAUTHORIZED_RESPONSE,
  resolveAuthOptions,
} from './auth.options';

/** resolveAuthOptions: defaults (docs/decisions.md A1-A8) and validation at module start. */

const SECRET = 'an-hs256-secret-that-is-at-least-32-bytes-long';
const TEST_ENV = { NODE_ENV: 'test' } as NodeJS.ProcessEnv;

function problemsOf(options: unknown, env: NodeJS.ProcessEnv = TEST_ENV): string[] {
  try {
    resolveAuthOptions(options as AuthModuleOptions, env);
  } catch (error) {
    expect(error).toBeInstanceOf(AuthOptionsError);
    const failure = error as AuthOptionsError;
    expect(failure.message).toBe(`Invalid AuthModule options: ${failure.problems.join('; ')}`);
    return failure.problems;
  }
  throw new Error('resolveAuthOptions accepted the options');
}

function pem(key: KeyObject): string {
  return key.export({ type: key.type === 'private' ? 'pkcs8' : 'spki', format: 'pem' }).toString();
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
const ed25519 = generateKeyPairSync('ed25519');

describe('resolveAuthOptions defaults', () => {
  const resolved = resolveAuthOptions({ jwtSecret: SECRET }, TEST_ENV);

  it('fills every default docs/configuration.md and docs/decisions.md list', () => {
    expect(resolved).toMatchObject({
      jwtAlgorithm: 'HS256',
      validateTenantId: false,
      tenantIdHeaderName: 'x-tenant-id',
      validateSubdomain: false,
      validatePathnameSlug: false,
      payloadMapping: {
        userId: 'user_id',
        tenantId: 'tenant_id',
        subdomain: 'subdomain',
        pathnameSlugs: 'pathname_slugs',
        roleIds: 'role_ids',
      },
      skipPaths: [],
      rbacEnabled: false,
      rbacCacheStoreOptions: {},
      permissionsCacheStoreOptions: {},
      cachedPermissionsTtl: 1800,
      rbacRecordKey: 'permissions',
      rbacRecordMaxBytes: 1_048_576,
      unauthorizedResponse: { error: 'Authentication required', status: 401 },
      forbiddenResponse: { error: 'Access denied', status: 403 },
      responseCodes: true,
      debugMode: false,
      clockTolerance: 0,
      requireExp: true,
      trustProxy: false,
      skipPreflight: true,
      maxTokenBytes: 8192,
      verifiedTokenCacheSize: 10_000,
      allowWeakSecret: false,
      global: true,
    });
    expect(resolved.rbacCacheStore).toBeUndefined();
    expect(resolved.permissionsCacheStore).toBeUndefined();
    expect(resolved.customPayloadValidator).toBeUndefined();
    expect(resolved.tokenCookieName).toBeUndefined();
    expect(resolved.issuer).toBeUndefined();
    expect(resolved.audience).toBeUndefined();
  });

  it('uses the seed slug pattern ^/api/v1/([^/]+)/ whose first group is the slug', () => {
    expect(resolved.pathnameSlugPattern.source).toBe('^\\/api\\/v1\\/([^/]+)\\/');
    expect(resolved.pathnameSlugPattern.exec('/api/v1/acme/sales')?.[1]).toBe('acme');
    expect(resolved.pathnameSlugPattern.test('/api/v2/acme/sales')).toBe(false);
  });

  it('builds the HS key once as a secret KeyObject of the secret bytes', () => {
    expect(resolved.verificationKey).toBeInstanceOf(KeyObject);
    expect(resolved.verificationKey.type).toBe('secret');
    expect(resolved.verificationKey.export().toString('utf8')).toBe(SECRET);
  });

  it('copies the response bodies, so editing one never changes the shared default', () => {
    resolved.unauthorizedResponse.error = 'changed';
    resolved.forbiddenResponse.error = 'changed';
    expect(DEFAULT_UNAUTHORIZED_RESPONSE.error).toBe('Authentication required');
    expect(DEFAULT_FORBIDDEN_RESPONSE.error).toBe('Access denied');
    expect(resolveAuthOptions({ jwtSecret: SECRET }, TEST_ENV).unauthorizedResponse.error).toBe('Authentication required');
  });

  it('turns debugMode on only when NODE_ENV is development', () => {
    expect(resolveAuthOptions({ jwtSecret: SECRET }, { NODE_ENV: 'development' } as NodeJS.ProcessEnv).debugMode).toBe(true);
    expect(resolveAuthOptions({ jwtSecret: SECRET }, { NODE_ENV: 'production' } as NodeJS.ProcessEnv).debugMode).toBe(false);
    expect(resolveAuthOptions({ jwtSecret: SECRET }, {} as NodeJS.ProcessEnv).debugMode).toBe(false);
    expect(resolveAuthOptions({ jwtSecret: SECRET }, { NODE_ENV: 'Development' } as NodeJS.ProcessEnv).debugMode).toBe(false);
  });

  it('lets an explicit debugMode win over the environment', () => {
    const development = { NODE_ENV: 'development' } as NodeJS.ProcessEnv;
    expect(resolveAuthOptions({ jwtSecret: SECRET, debugMode: false }, development).debugMode).toBe(false);
    expect(resolveAuthOptions({ jwtSecret: SECRET, debugMode: true }, TEST_ENV).debugMode).toBe(true);
  });

  it('keeps explicit values and lower-cases the tenant header name', () => {
    const options = resolveAuthOptions(
      {
        jwtSecret: SECRET,
        jwtAlgorithm: 'HS512',
        tenantIdHeaderName: 'X-Org-ID',
        cachedPermissionsTtl: 60,
        responseCodes: false,
        requireExp: false,
        skipPreflight: false,
        maxTokenBytes: 4096,
        clockTolerance: 5,
        global: false,
        trustProxy: true,
        tokenCookieName: 'session',
        issuer: ['https://idp.example.com'],
        audience: 'tollgate',
        skipPaths: ['/health', '/public/*', '%r{^/docs}', /^\/static\//],
        unauthorizedResponse: { message: 'login first' },
      },
      TEST_ENV,
    );
    expect(options).toMatchObject({
      jwtAlgorithm: 'HS512',
      tenantIdHeaderName: 'x-org-id',
      cachedPermissionsTtl: 60,
      responseCodes: false,
      requireExp: false,
      skipPreflight: false,
      maxTokenBytes: 4096,
      clockTolerance: 5,
      global: false,
      trustProxy: true,
      tokenCookieName: 'session',
      issuer: ['https://idp.example.com'],
      audience: 'tollgate',
      unauthorizedResponse: { message: 'login first' },
    });
    expect(options.skipPaths).toHaveLength(4);
  });

  it('merges a partial payloadMapping with the defaults', () => {
    const options = resolveAuthOptions({ jwtSecret: SECRET, payloadMapping: { userId: 'sub', roleIds: 'user_roles' } }, TEST_ENV);
    expect(options.payloadMapping).toEqual({
      userId: 'sub',
      tenantId: 'tenant_id',
      subdomain: 'subdomain',
      pathnameSlugs: 'pathname_slugs',
      roleIds: 'user_roles',
    });
  });

  it('accepts a slug pattern as a string, a %r{} string or a RegExp, and drops the g/y flags', () => {
    expect(resolveAuthOptions({ jwtSecret: SECRET, pathnameSlugPattern: '^/t/([^/]+)' }, TEST_ENV).pathnameSlugPattern.exec('/t/x/y')?.[1]).toBe('x');
    expect(resolveAuthOptions({ jwtSecret: SECRET, pathnameSlugPattern: '%r{^/o/([a-z]+)/}' }, TEST_ENV).pathnameSlugPattern.exec('/o/ab/')?.[1]).toBe(
      'ab',
    );
    const fromRegExp = resolveAuthOptions({ jwtSecret: SECRET, pathnameSlugPattern: /^\/s\/([^/]+)/gi }, TEST_ENV).pathnameSlugPattern;
    expect(fromRegExp.flags).toBe('i');
    expect(fromRegExp.exec('/S/north')?.[1]).toBe('north');
  });

  it('accepts valid store settings', () => {
    const options = resolveAuthOptions(
      {
        jwtSecret: SECRET,
        rbacEnabled: true,
        rbacCacheStore: 'redis',
        rbacCacheStoreOptions: { url: 'redis://127.0.0.1:6379' },
        permissionsCacheStore: 'memcached',
        permissionsCacheStoreOptions: { servers: ['127.0.0.1:11211', 'cache.internal:11212'] },
      },
      TEST_ENV,
    );
    expect(options.rbacCacheStore).toBe('redis');
    expect(options.rbacCacheStoreOptions).toEqual({ url: 'redis://127.0.0.1:6379' });
    expect(options.permissionsCacheStore).toBe('memcached');
    expect(
      resolveAuthOptions({ jwtSecret: SECRET, rbacCacheStore: 'postgres', rbacCacheStoreOptions: { url: 'postgres://u@db:5432/x' } }, TEST_ENV)
        .rbacCacheStore,
    ).toBe('postgres');
    expect(resolveAuthOptions({ jwtSecret: SECRET, permissionsCacheStore: 'memory' }, TEST_ENV).permissionsCacheStore).toBe('memory');
  });

  it('accepts a Buffer or a secret KeyObject of 32 bytes or more', () => {
    const bytes = Buffer.alloc(32, 7);
    expect(resolveAuthOptions({ jwtSecret: bytes }, TEST_ENV).verificationKey.symmetricKeySize).toBe(32);
    expect(resolveAuthOptions({ jwtSecret: createSecretKey(bytes) }, TEST_ENV).verificationKey.symmetricKeySize).toBe(32);
  });
});

describe('resolveAuthOptions HS secret strength', () => {
  it('refuses a secret shorter than 32 bytes, counting bytes not characters', () => {
    expect(problemsOf({ jwtSecret: 'x'.repeat(31) })).toEqual([expect.stringMatching(/^jwtSecret is 31 bytes; HS256 needs at least 32/)]);
    // 11 two-byte characters: 22 bytes.
    expect(problemsOf({ jwtSecret: 'é'.repeat(11) })).toEqual([expect.stringContaining('jwtSecret is 22 bytes')]);
    // 16 two-byte characters: 32 bytes, enough.
    expect(resolveAuthOptions({ jwtSecret: 'é'.repeat(16) }, TEST_ENV).verificationKey.symmetricKeySize).toBe(32);
    expect(problemsOf({ jwtSecret: createSecretKey(Buffer.alloc(16)) })).toEqual([expect.stringContaining('jwtSecret is 16 bytes')]);
  });

  it('accepts a weak secret when allowWeakSecret is true', () => {
    const options = resolveAuthOptions({ jwtSecret: 'short', allowWeakSecret: true, jwtAlgorithm: 'HS384' }, TEST_ENV);
    expect(options.allowWeakSecret).toBe(true);
    expect(options.verificationKey.symmetricKeySize).toBe(5);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['an empty Buffer', Buffer.alloc(0)],
    ['null', null],
    ['a number', 12345],
  ])('refuses a %s secret', (_, jwtSecret) => {
    expect(problemsOf({ jwtSecret })).toEqual([expect.stringMatching(/^jwtSecret is required/)]);
  });

  it('refuses a public key for an HS algorithm', () => {
    expect(problemsOf({ jwtSecret: rsa.publicKey })).toEqual(['jwtSecret must be a secret key for HS256 (got a public key)']);
  });
});

describe('resolveAuthOptions algorithms', () => {
  it.each(['none', 'None', 'hs256', 'HS257', 'RS1', 'EdDSA', '', 256])('refuses jwtAlgorithm %p', (jwtAlgorithm) => {
    const problems = problemsOf({ jwtSecret: SECRET, jwtAlgorithm });
    expect(problems).toEqual([expect.stringMatching(/^jwtAlgorithm must be one of HS256, HS384, HS512, RS256, .*ES512 \(got /)]);
    expect(problems[0]).toContain(`(got ${JSON.stringify(jwtAlgorithm)})`);
  });

  it('still checks the secret when the algorithm is unknown', () => {
    const problems = problemsOf({ jwtSecret: 'short', jwtAlgorithm: 'HS257' });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^jwtAlgorithm/);
    expect(problems[1]).toMatch(/^jwtSecret is 5 bytes/);
    expect(problemsOf({ jwtAlgorithm: 'none' })).toEqual([expect.stringMatching(/^jwtAlgorithm/), expect.stringMatching(/^jwtSecret is required/)]);
    // A PEM key with a misspelt asymmetric algorithm is not judged as an HS secret.
    expect(problemsOf({ jwtSecret: pem(rsa.publicKey), jwtAlgorithm: 'rs256' })).toEqual([expect.stringMatching(/^jwtAlgorithm/)]);
  });

  it.each([
    ['RS256', rsa],
    ['RS512', rsa],
    ['PS256', rsa],
    ['ES256', p256],
    ['ES384', p384],
  ] as const)('%s accepts a PEM public key', (jwtAlgorithm, pair) => {
    const options = resolveAuthOptions({ jwtSecret: pem(pair.publicKey), jwtAlgorithm }, TEST_ENV);
    expect(options.jwtAlgorithm).toBe(jwtAlgorithm);
    expect(options.verificationKey.type).toBe('public');
    expect(pem(options.verificationKey)).toBe(pem(pair.publicKey));
  });

  it('PS256 also accepts an RSA-PSS key; RS256 does not', () => {
    expect(resolveAuthOptions({ jwtSecret: pem(rsaPss.publicKey), jwtAlgorithm: 'PS256' }, TEST_ENV).verificationKey.asymmetricKeyType).toBe(
      'rsa-pss',
    );
    expect(problemsOf({ jwtSecret: pem(rsaPss.publicKey), jwtAlgorithm: 'RS256' })).toEqual([
      'jwtSecret must be an RSA key for RS256 (got rsa-pss)',
    ]);
  });

  it.each([
    ['RS256', rsa],
    ['ES256', p256],
  ] as const)('%s turns a private key (PEM or KeyObject) into its public key', (jwtAlgorithm, pair) => {
    for (const jwtSecret of [pem(pair.privateKey), pair.privateKey]) {
      const key = resolveAuthOptions({ jwtSecret, jwtAlgorithm }, TEST_ENV).verificationKey;
      expect(key.type).toBe('public');
      expect(pem(key)).toBe(pem(pair.publicKey));
    }
  });

  it('prefers jwtPublicKey over jwtSecret for asymmetric algorithms', () => {
    const options = resolveAuthOptions({ jwtSecret: 'unused', jwtPublicKey: pem(p384.publicKey), jwtAlgorithm: 'ES384' }, TEST_ENV);
    expect(pem(options.verificationKey)).toBe(pem(p384.publicKey));
    expect(problemsOf({ jwtSecret: pem(p256.publicKey), jwtPublicKey: 'not a key', jwtAlgorithm: 'ES256' })).toEqual([
      'jwtPublicKey must be a PEM public key for ES256',
    ]);
  });

  it.each([
    ['an EC key for RS256', 'RS256', p256.publicKey, 'jwtSecret must be an RSA key for RS256 (got ec)'],
    ['an EC key for PS256', 'PS256', p256.publicKey, 'jwtSecret must be an RSA key for PS256 (got ec)'],
    ['a P-384 key for ES256', 'ES256', p384.publicKey, 'jwtSecret must be an EC key on curve prime256v1 for ES256 (got ec secp384r1)'],
    ['a P-256 key for ES384', 'ES384', p256.publicKey, 'jwtSecret must be an EC key on curve secp384r1 for ES384 (got ec prime256v1)'],
    ['an RSA key for ES256', 'ES256', rsa.publicKey, 'jwtSecret must be an EC key on curve prime256v1 for ES256 (got rsa)'],
    ['an Ed25519 key for RS256', 'RS256', ed25519.publicKey, 'jwtSecret must be an RSA key for RS256 (got ed25519)'],
    ['a 1024-bit RSA key', 'RS256', rsa1024.publicKey, 'jwtSecret must be an RSA key of at least 2048 bits for RS256'],
  ] as const)('refuses %s', (_, jwtAlgorithm, key, message) => {
    expect(problemsOf({ jwtSecret: pem(key), jwtAlgorithm })).toEqual([message]);
    expect(problemsOf({ jwtSecret: key, jwtAlgorithm })).toEqual([message]);
  });

  it('refuses an HS secret or a secret KeyObject for RS256', () => {
    expect(problemsOf({ jwtSecret: SECRET, jwtAlgorithm: 'RS256' })).toEqual(['jwtSecret must be a PEM public key for RS256']);
    expect(problemsOf({ jwtSecret: createSecretKey(Buffer.alloc(64)), jwtAlgorithm: 'RS256' })).toEqual([
      'jwtSecret must be a public key for RS256 (got a secret key)',
    ]);
  });
});

describe('resolveAuthOptions reports every bad option at once', () => {
  const bad = {
    jwtSecret: 'tiny-secret-XYZ',
    jwtAlgorithm: 'HS256',
    jwtSecrett: 'typo',
    validateTenantId: 'yes',
    validateSubdomain: 1,
    validatePathnameSlug: 'true',
    rbacEnabled: null,
    responseCodes: 'false',
    debugMode: 0,
    requireExp: 'no',
    trustProxy: 'x',
    skipPreflight: {},
    global: 'true',
    allowWeakSecret: 'yes',
    tenantIdHeaderName: 'X Tenant',
    tokenCookieName: 'a=b',
    pathnameSlugPattern: '^/api/v1/[^/]+/',
    payloadMapping: { userId: 'sub', userid: 'x', tenantId: 42 },
    skipPaths: ['/ok', 'no-slash', '%r{(}', 42],
    rbacCacheStore: 'redis',
    rbacCacheStoreOptions: {},
    permissionsCacheStoreOptions: { url: 'redis://127.0.0.1' },
    cachedPermissionsTtl: 0,
    rbacRecordRefreshMs: -1,
    rbacRecordMaxBytes: 10,
    maxTokenBytes: 10,
    verifiedTokenCacheSize: -1,
    rbacRecordKey: '',
    unauthorizedResponse: 'nope',
    forbiddenResponse: ['x'],
    customPayloadValidator: 'fn',
    clockTolerance: -1,
    issuer: [],
    audience: [''],
  };

  it('names each of them in one AuthOptionsError', () => {
    const problems = problemsOf(bad);
    const expected = [
      'jwtSecrett is not an AuthModule option',
      ...[
        'validateTenantId',
        'validateSubdomain',
        'validatePathnameSlug',
        'rbacEnabled',
        'responseCodes',
        'debugMode',
        'requireExp',
        'trustProxy',
        'skipPreflight',
        'allowWeakSecret',
        'global',
      ].map((name) => `${name} must be true or false`),
      'jwtSecret is 15 bytes; HS256 needs at least 32 (or set allowWeakSecret: true)',
      'tenantIdHeaderName must be an HTTP header name',
      'tokenCookieName must be a cookie name',
      'pathnameSlugPattern needs a capture group: the first group is the slug',
      'payloadMapping.userid is not a mapping key (use userId, tenantId, subdomain, pathnameSlugs, roleIds)',
      'payloadMapping.tenantId must be a claim name',
      'skipPaths[1] must start with "/" (or be written %r{...})',
      'skipPaths[2] is not a valid regular expression',
      'skipPaths[3] must be a string or a RegExp',
      'rbacCacheStoreOptions.url is required (e.g. redis://127.0.0.1:6379)',
      'permissionsCacheStoreOptions is given but permissionsCacheStore is not set',
      'cachedPermissionsTtl must be an integer from 1 to 31536000 (got 0)',
      'rbacRecordRefreshMs must be an integer from 0 to 60000 (got -1)',
      'rbacRecordMaxBytes must be an integer from 1024 to 268435456 (got 10)',
      'maxTokenBytes must be an integer from 256 to 1048576 (got 10)',
      'verifiedTokenCacheSize must be an integer from 0 to 1000000 (got -1)',
      'rbacRecordKey must be a non-empty string',
      'unauthorizedResponse must be an object (it is sent as the JSON body)',
      'forbiddenResponse must be an object (it is sent as the JSON body)',
      'customPayloadValidator must be a function (payload, request) => boolean | Promise<boolean>',
      'clockTolerance must be a number of seconds from 0 to 86400',
      'issuer must be a non-empty string or a list of them',
      'audience must be a non-empty string or a list of them',
    ];
    expect([...problems].sort()).toEqual([...expected].sort());
  });

  it('never puts the secret in the message', () => {
    for (const jwtSecret of ['tiny-secret-XYZ', 'Qz7#', 'hunter2-but-for-the-wrong-algorithm-and-long']) {
      for (const jwtAlgorithm of ['HS256', 'RS256', 'ES256', 'none', 'HS257']) {
        let message = '';
        try {
          resolveAuthOptions({ ...bad, jwtSecret, jwtAlgorithm } as unknown as AuthModuleOptions, TEST_ENV);
        } catch (error) {
          message = (error as Error).message;
        }
        expect(message).toMatch(/^Invalid AuthModule options: /);
        expect(message).not.toContain(jwtSecret);
      }
    }
    const privatePem = pem(rsa.privateKey);
    let message = '';
    try {
      resolveAuthOptions({ jwtSecret: privatePem, jwtAlgorithm: 'ES256' }, TEST_ENV);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('ES256');
    expect(message).not.toContain('PRIVATE KEY');
    expect(message).not.toContain(privatePem.split('\n')[1]);
  });

  it('never echoes a store URL, which may hold a password', () => {
    const problems = problemsOf({ jwtSecret: SECRET, rbacCacheStore: 'redis', rbacCacheStoreOptions: { url: 'redis://:s3cr3t-pw@[bad' } });
    expect(problems).toEqual(['rbacCacheStoreOptions.url is not a valid URL (e.g. redis://127.0.0.1:6379)']);
    expect(problems.join()).not.toContain('s3cr3t-pw');
  });

  it('refuses a non-object', () => {
    expect(problemsOf(undefined)).toEqual(['options must be an object']);
    expect(problemsOf('secret')).toEqual(['options must be an object']);
    expect(problemsOf([SECRET])).toEqual(['options must be an object']);
  });
});

describe('resolveAuthOptions single problems', () => {
  it.each([
    ['a regex that does not compile', { pathnameSlugPattern: '^/api/([a-z' }, 'pathnameSlugPattern must be a valid regular expression (string or RegExp)'],
    ['a %r{} regex that does not compile', { pathnameSlugPattern: '%r{(}' }, 'pathnameSlugPattern must be a valid regular expression (string or RegExp)'],
    ['a non-string slug pattern', { pathnameSlugPattern: 42 }, 'pathnameSlugPattern must be a valid regular expression (string or RegExp)'],
    ['a slug pattern with only a non-capturing group', { pathnameSlugPattern: /^\/api\/(?:v1)\// }, 'pathnameSlugPattern needs a capture group: the first group is the slug'],
    ['skipPaths that is not a list', { skipPaths: '/health' }, 'skipPaths must be a list of paths, "prefix/*" entries, "%r{regex}" strings or RegExps'],
    ['an unknown store kind', { rbacCacheStore: 'mongodb' }, 'rbacCacheStore must be one of memory, redis, memcached, postgres (got "mongodb")'],
    ['a lower-level store object', { permissionsCacheStore: { get: () => 1 } }, 'permissionsCacheStore must be one of memory, redis, memcached, postgres or a cache-manager Cache instance'],
    ['a null store', { rbacCacheStore: null }, 'rbacCacheStore must name a store (memory, redis, memcached, postgres) or be left unset to use the host\'s cache'],
    ['redis without url', { rbacCacheStore: 'redis' }, 'rbacCacheStoreOptions.url is required (e.g. redis://127.0.0.1:6379)'],
    ['redis with an http url', { rbacCacheStore: 'redis', rbacCacheStoreOptions: { url: 'http://127.0.0.1:6379' } }, 'rbacCacheStoreOptions.url must use redis: or rediss: (e.g. redis://127.0.0.1:6379)'],
    ['memcached without servers', { permissionsCacheStore: 'memcached' }, 'permissionsCacheStoreOptions.servers is required: a non-empty list of host:port strings (e.g. ["127.0.0.1:11211"])'],
    ['memcached server "nohost"', { permissionsCacheStore: 'memcached', permissionsCacheStoreOptions: { servers: ['nohost'] } }, 'permissionsCacheStoreOptions.servers[0] must be a host:port string (got "nohost")'],
    ['memcached port out of range', { rbacCacheStore: 'memcached', rbacCacheStoreOptions: { servers: ['a:1', 'b:70000'] } }, 'rbacCacheStoreOptions.servers[1] must be a host:port string (got "b:70000")'],
    ['an option of another store', { rbacCacheStore: 'memory', rbacCacheStoreOptions: { url: 'redis://x' } }, 'rbacCacheStoreOptions.url is not an option of the memory store'],
    ['store options without a store', { rbacCacheStoreOptions: { url: 'redis://x' } }, 'rbacCacheStoreOptions is given but rbacCacheStore is not set'],
    ['a postgres table that is not an identifier', { rbacCacheStore: 'postgres', rbacCacheStoreOptions: { url: 'postgres://db/x', table: 'a;drop' } }, 'rbacCacheStoreOptions.table must be an unquoted SQL identifier (letters, digits, _; at most 63)'],
    ['a fractional ttl', { cachedPermissionsTtl: 1.5 }, 'cachedPermissionsTtl must be an integer from 1 to 31536000 (got 1.5)'],
    ['a string ttl', { cachedPermissionsTtl: '1800' }, 'cachedPermissionsTtl must be an integer from 1 to 31536000 (got "1800")'],
    ['a negative ttl', { cachedPermissionsTtl: -5 }, 'cachedPermissionsTtl must be an integer from 1 to 31536000 (got -5)'],
    ['a fractional verifiedTokenCacheSize', { verifiedTokenCacheSize: 1.5 }, 'verifiedTokenCacheSize must be an integer from 0 to 1000000 (got 1.5)'],
    ['a verifiedTokenCacheSize over the bound', { verifiedTokenCacheSize: 1_000_001 }, 'verifiedTokenCacheSize must be an integer from 0 to 1000000 (got 1000001)'],
    ['a NaN clock tolerance', { clockTolerance: Number.NaN }, 'clockTolerance must be a number of seconds from 0 to 86400'],
    ['a payloadMapping that is not an object', { payloadMapping: 'sub' }, 'payloadMapping must be an object of { userId, tenantId, subdomain, pathnameSlugs, roleIds } -> claim name'],
    ['an empty claim name', { payloadMapping: { roleIds: '' } }, 'payloadMapping.roleIds must be a claim name'],
    ['a non-string issuer', { issuer: 7 }, 'issuer must be a non-empty string or a list of them'],
  ])('refuses %s', (_, extra, message) => {
    expect(problemsOf({ jwtSecret: SECRET, ...extra })).toEqual([message]);
  });

  it('accepts a cache-manager Cache instance as a store', () => {
    const cache = { get: async () => undefined, set: async () => undefined, del: async () => true };
    expect(resolveAuthOptions({ jwtSecret: SECRET, rbacCacheStore: cache as never }, TEST_ENV).rbacCacheStore).toBe(cache);
  });

  it('accepts edge values at both ends of the ranges', () => {
    expect(
      resolveAuthOptions({ jwtSecret: SECRET, cachedPermissionsTtl: 1, maxTokenBytes: 256, clockTolerance: 0, verifiedTokenCacheSize: 0 }, TEST_ENV),
    ).toMatchObject({
      cachedPermissionsTtl: 1,
      maxTokenBytes: 256,
      verifiedTokenCacheSize: 0,
    });
    expect(problemsOf({ jwtSecret: SECRET, maxTokenBytes: 255 })).toEqual(['maxTokenBytes must be an integer from 256 to 1048576 (got 255)']);
    expect(problemsOf({ jwtSecret: SECRET, clockTolerance: 86_401 })).toEqual(['clockTolerance must be a number of seconds from 0 to 86400']);
  });
});
