import { createPublicKey, createSecretKey, KeyObject } from 'node:crypto';
import {
  JWT_ALGORITHMS,
  type AuthModuleOptions,
  type JwtAlgorithm,
  type PayloadMapping,
  type ResolvedAuthOptions,
  type SkipPath,
} from './auth-module-options.interface';
import { DEFAULT_CACHED_PERMISSIONS_TTL, DEFAULT_PATHNAME_SLUG_PATTERN, DEFAULT_RBAC_RECORD_KEY, DEFAULT_RBAC_RECORD_REFRESH_MS } from './auth.constants';
import { DEFAULT_RBAC_RECORD_MAX_BYTES } from './rbac/record-size';
import { regexSource } from './skip-paths';
import { cacheStoreErrors } from './stores/cache-store.factory';

export const DEFAULT_TENANT_ID_HEADER = 'X-Tenant-Id';
export const DEFAULT_MAX_TOKEN_BYTES = 8192;
export const DEFAULT_VERIFIED_TOKEN_CACHE_SIZE = 10_000;
export const MIN_HS_SECRET_BYTES = 32;
export const DEFAULT_PAYLOAD_MAPPING: Readonly<PayloadMapping> = Object.freeze({
  userId: 'user_id',
  tenantId: 'tenant_id',
  subdomain: 'subdomain',
  pathnameSlugs: 'pathname_slugs',
  roleIds: 'role_ids',
});
export const DEFAULT_UNAUTHORIZED_RESPONSE = Object.freeze({ error: 'Authentication required', status: 401 });
export const DEFAULT_FORBIDDEN_RESPONSE = Object.freeze({ error: 'Access denied', status: 403 });

/** Every option `forRoot` accepts; anything else is a typo the user should hear about. */
const OPTION_NAMES: ReadonlySet<string> = new Set<keyof AuthModuleOptions>([
  'jwtSecret', 'jwtPublicKey', 'jwtAlgorithm', 'validateTenantId', 'tenantIdHeaderName', 'validateSubdomain',
  'validatePathnameSlug', 'pathnameSlugPattern', 'payloadMapping', 'skipPaths', 'rbacEnabled', 'rbacCacheStore',
  'rbacCacheStoreOptions', 'permissionsCacheStore', 'permissionsCacheStoreOptions', 'cachedPermissionsTtl',
  'rbacRecordKey', 'rbacRecordRefreshMs', 'rbacRecordMaxBytes', 'unauthorizedResponse', 'forbiddenResponse',
  'responseCodes', 'customPayloadValidator', 'debugMode', 'clockTolerance', 'requireExp', 'issuer', 'audience',
  'trustProxy', 'skipPreflight', 'tokenCookieName', 'maxTokenBytes', 'verifiedTokenCacheSize', 'allowWeakSecret',
  'global',
]);

const BOOLEAN_OPTIONS = [
  'validateTenantId', 'validateSubdomain', 'validatePathnameSlug', 'rbacEnabled', 'responseCodes', 'debugMode',
  'requireExp', 'trustProxy', 'skipPreflight', 'allowWeakSecret', 'global',
] as const;

/** RFC 7230 token: what a header or cookie name may be made of. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The curve each ES algorithm signs with (RFC 7518 3.4). */
const EC_CURVES: Record<string, string> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

/** Every problem found in the options, each naming the option; thrown once at module start. */
export class AuthOptionsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid AuthModule options: ${problems.join('; ')}`);
    this.name = 'AuthOptionsError';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof KeyObject) && !Buffer.isBuffer(value);
}

function compileRegex(source: string): RegExp | undefined {
  try {
    return new RegExp(source);
  } catch {
    return undefined;
  }
}

function captureGroups(pattern: RegExp): number {
  return (new RegExp(`${pattern.source}|`).exec('')?.length ?? 1) - 1;
}

/** The key `verify` uses, built once; problems are pushed, never the key material. */
function verificationKey(options: AuthModuleOptions, algorithm: JwtAlgorithm, allowWeak: boolean, problems: string[]): KeyObject | undefined {
  if (algorithm.startsWith('HS')) {
    const secret = options.jwtSecret;
    let key: KeyObject;
    if (secret instanceof KeyObject) {
      if (secret.type !== 'secret') {
        problems.push(`jwtSecret must be a secret key for ${algorithm} (got a ${secret.type} key)`);
        return undefined;
      }
      key = secret;
    } else if (typeof secret === 'string' || Buffer.isBuffer(secret)) {
      if (secret.length === 0) {
        problems.push('jwtSecret is required (generate one with `tollgate secret`)');
        return undefined;
      }
      key = createSecretKey(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret);
    } else {
      problems.push('jwtSecret is required: a string, a Buffer or a secret KeyObject (generate one with `tollgate secret`)');
      return undefined;
    }
    if (key.symmetricKeySize! < MIN_HS_SECRET_BYTES && !allowWeak) {
      problems.push(`jwtSecret is ${key.symmetricKeySize} bytes; ${algorithm} needs at least ${MIN_HS_SECRET_BYTES} (or set allowWeakSecret: true)`);
      return undefined;
    }
    return key;
  }

  const source = options.jwtPublicKey ?? options.jwtSecret;
  const name = options.jwtPublicKey !== undefined ? 'jwtPublicKey' : 'jwtSecret';
  let key: KeyObject;
  try {
    key = source instanceof KeyObject ? source : createPublicKey(source as string | Buffer);
  } catch {
    problems.push(`${name} must be a PEM public key for ${algorithm}`);
    return undefined;
  }
  if (key.type === 'private') key = createPublicKey(key);
  if (key.type !== 'public') {
    problems.push(`${name} must be a public key for ${algorithm} (got a ${key.type} key)`);
    return undefined;
  }
  const type = key.asymmetricKeyType;
  if (algorithm.startsWith('ES')) {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (type !== 'ec' || curve !== EC_CURVES[algorithm]) {
      problems.push(`${name} must be an EC key on curve ${EC_CURVES[algorithm]} for ${algorithm} (got ${type}${curve ? ` ${curve}` : ''})`);
      return undefined;
    }
  } else if (type !== 'rsa' && !(type === 'rsa-pss' && algorithm.startsWith('PS'))) {
    problems.push(`${name} must be an RSA key for ${algorithm} (got ${type})`);
    return undefined;
  } else if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
    problems.push(`${name} must be an RSA key of at least 2048 bits for ${algorithm}`);
    return undefined;
  }
  return key;
}

/** A PEM string or an asymmetric KeyObject: the secret was meant for an RS/PS/ES algorithm. */
function looksAsymmetric(secret: unknown): boolean {
  if (secret instanceof KeyObject) return secret.type !== 'secret';
  return typeof secret === 'string' && secret.includes('-----BEGIN');
}

function stringListErrors(name: string, value: unknown): string[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || !list.every((entry) => typeof entry === 'string' && entry !== '')) {
    return [`${name} must be a non-empty string or a list of them`];
  }
  return [];
}

function integerError(name: string, value: unknown, min: number, max: number): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    return [`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`];
  }
  return [];
}

function skipPathErrors(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return ['skipPaths must be a list of paths, "prefix/*" entries, "%r{regex}" strings or RegExps'];
  const errors: string[] = [];
  value.forEach((entry: unknown, index) => {
    if (entry instanceof RegExp) return;
    if (typeof entry !== 'string') {
      errors.push(`skipPaths[${index}] must be a string or a RegExp`);
      return;
    }
    const source = regexSource(entry);
    if (source !== undefined) {
      if (!compileRegex(source)) errors.push(`skipPaths[${index}] is not a valid regular expression`);
    } else if (!entry.startsWith('/')) {
      errors.push(`skipPaths[${index}] must start with "/" (or be written %r{...})`);
    }
  });
  return errors;
}

function slugPattern(value: unknown, problems: string[]): RegExp | undefined {
  if (value === undefined) return new RegExp(DEFAULT_PATHNAME_SLUG_PATTERN);
  let pattern: RegExp | undefined;
  if (value instanceof RegExp) pattern = new RegExp(value.source, value.flags.replace(/[gy]/g, ''));
  else if (typeof value === 'string') pattern = compileRegex(regexSource(value) ?? value);
  if (!pattern) {
    problems.push('pathnameSlugPattern must be a valid regular expression (string or RegExp)');
    return undefined;
  }
  if (captureGroups(pattern) < 1) {
    problems.push('pathnameSlugPattern needs a capture group: the first group is the slug');
    return undefined;
  }
  return pattern;
}

function payloadMapping(value: unknown, problems: string[]): PayloadMapping {
  if (value === undefined) return { ...DEFAULT_PAYLOAD_MAPPING };
  if (!isPlainObject(value)) {
    problems.push('payloadMapping must be an object of { userId, tenantId, subdomain, pathnameSlugs, roleIds } -> claim name');
    return { ...DEFAULT_PAYLOAD_MAPPING };
  }
  for (const [key, claim] of Object.entries(value)) {
    if (!(key in DEFAULT_PAYLOAD_MAPPING)) problems.push(`payloadMapping.${key} is not a mapping key (use ${Object.keys(DEFAULT_PAYLOAD_MAPPING).join(', ')})`);
    else if (claim !== undefined && (typeof claim !== 'string' || claim === '')) problems.push(`payloadMapping.${key} must be a claim name`);
  }
  // A partial mapping merges with the defaults: keys left out keep their own claim name.
  const merged: PayloadMapping = { ...DEFAULT_PAYLOAD_MAPPING };
  for (const key of Object.keys(DEFAULT_PAYLOAD_MAPPING) as (keyof PayloadMapping)[]) {
    const claim = value[key];
    if (typeof claim === 'string' && claim !== '') merged[key] = claim;
  }
  return merged;
}

function storeErrors(options: AuthModuleOptions, prefix: 'rbacCacheStore' | 'permissionsCacheStore'): string[] {
  const setting = options[prefix];
  const storeOptions = options[`${prefix}Options`];
  if (setting === null || (setting as unknown) === '') {
    return [`${prefix} must name a store (memory, redis, memcached, postgres) or be left unset to use the host's cache`];
  }
  if (setting === undefined && storeOptions !== undefined && Object.keys(storeOptions).length > 0) {
    return [`${prefix}Options is given but ${prefix} is not set`];
  }
  return cacheStoreErrors(prefix, setting, storeOptions);
}

/**
 * Defaults and validation in one place (docs/decisions.md A1-A8). Throws AuthOptionsError naming
 * every bad option at once, so one start-up shows the whole list.
 */
export function resolveAuthOptions(input: AuthModuleOptions, env: NodeJS.ProcessEnv = process.env): ResolvedAuthOptions {
  if (!isPlainObject(input)) throw new AuthOptionsError(['options must be an object']);
  const options = input;
  const problems: string[] = [];

  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.has(key)) problems.push(`${key} is not an AuthModule option`);
  }
  for (const key of BOOLEAN_OPTIONS) {
    if (options[key] !== undefined && typeof options[key] !== 'boolean') problems.push(`${key} must be true or false`);
  }

  const algorithm = options.jwtAlgorithm ?? 'HS256';
  const knownAlgorithm = (JWT_ALGORITHMS as readonly unknown[]).includes(algorithm);
  if (!knownAlgorithm) {
    problems.push(`jwtAlgorithm must be one of ${JWT_ALGORITHMS.join(', ')} (got ${JSON.stringify(algorithm)})`);
  }
  const allowWeakSecret = options.allowWeakSecret === true;
  const key = knownAlgorithm ? verificationKey(options, algorithm, allowWeakSecret, problems) : undefined;
  // An unknown algorithm must not hide a missing or weak secret: one start-up names every problem.
  if (!knownAlgorithm && options.jwtPublicKey === undefined && !looksAsymmetric(options.jwtSecret)) {
    verificationKey(options, 'HS256', allowWeakSecret, problems);
  }

  const headerName = options.tenantIdHeaderName ?? DEFAULT_TENANT_ID_HEADER;
  if (typeof headerName !== 'string' || !HTTP_TOKEN.test(headerName)) problems.push('tenantIdHeaderName must be an HTTP header name');
  if (options.tokenCookieName !== undefined && (typeof options.tokenCookieName !== 'string' || !HTTP_TOKEN.test(options.tokenCookieName))) {
    problems.push('tokenCookieName must be a cookie name');
  }

  const pattern = slugPattern(options.pathnameSlugPattern, problems);
  const mapping = payloadMapping(options.payloadMapping, problems);
  problems.push(...skipPathErrors(options.skipPaths));
  problems.push(...storeErrors(options, 'rbacCacheStore'), ...storeErrors(options, 'permissionsCacheStore'));
  problems.push(...integerError('cachedPermissionsTtl', options.cachedPermissionsTtl, 1, 31_536_000));
  problems.push(...integerError('rbacRecordRefreshMs', options.rbacRecordRefreshMs, 0, 60_000));
  problems.push(...integerError('rbacRecordMaxBytes', options.rbacRecordMaxBytes, 1024, 268_435_456));
  problems.push(...integerError('maxTokenBytes', options.maxTokenBytes, 256, 1_048_576));
  problems.push(...integerError('verifiedTokenCacheSize', options.verifiedTokenCacheSize, 0, 1_000_000));
  if (options.rbacRecordKey !== undefined && (typeof options.rbacRecordKey !== 'string' || options.rbacRecordKey === '')) {
    problems.push('rbacRecordKey must be a non-empty string');
  }
  for (const name of ['unauthorizedResponse', 'forbiddenResponse'] as const) {
    if (options[name] !== undefined && !isPlainObject(options[name])) problems.push(`${name} must be an object (it is sent as the JSON body)`);
  }
  if (options.customPayloadValidator !== undefined && typeof options.customPayloadValidator !== 'function') {
    problems.push('customPayloadValidator must be a function (payload, request) => boolean | Promise<boolean>');
  }
  const tolerance = options.clockTolerance;
  if (tolerance !== undefined && (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0 || tolerance > 86_400)) {
    problems.push('clockTolerance must be a number of seconds from 0 to 86400');
  }
  problems.push(...stringListErrors('issuer', options.issuer), ...stringListErrors('audience', options.audience));

  if (problems.length > 0 || !key || !pattern) throw new AuthOptionsError(problems);

  return {
    jwtAlgorithm: algorithm,
    verificationKey: key,
    validateTenantId: options.validateTenantId ?? false,
    tenantIdHeaderName: headerName.toLowerCase(),
    validateSubdomain: options.validateSubdomain ?? false,
    validatePathnameSlug: options.validatePathnameSlug ?? false,
    pathnameSlugPattern: pattern,
    payloadMapping: mapping,
    skipPaths: (options.skipPaths ?? []) as SkipPath[],
    rbacEnabled: options.rbacEnabled ?? false,
    rbacCacheStore: options.rbacCacheStore,
    rbacCacheStoreOptions: options.rbacCacheStoreOptions ?? {},
    permissionsCacheStore: options.permissionsCacheStore,
    permissionsCacheStoreOptions: options.permissionsCacheStoreOptions ?? {},
    cachedPermissionsTtl: options.cachedPermissionsTtl ?? DEFAULT_CACHED_PERMISSIONS_TTL,
    rbacRecordKey: options.rbacRecordKey ?? DEFAULT_RBAC_RECORD_KEY,
    rbacRecordRefreshMs: options.rbacRecordRefreshMs ?? DEFAULT_RBAC_RECORD_REFRESH_MS,
    rbacRecordMaxBytes: options.rbacRecordMaxBytes ?? DEFAULT_RBAC_RECORD_MAX_BYTES,
    unauthorizedResponse: { ...(options.unauthorizedResponse ?? DEFAULT_UNAUTHORIZED_RESPONSE) },
    forbiddenResponse: { ...(options.forbiddenResponse ?? DEFAULT_FORBIDDEN_RESPONSE) },
    responseCodes: options.responseCodes ?? true,
    customPayloadValidator: options.customPayloadValidator,
    debugMode: options.debugMode ?? env.NODE_ENV === 'development',
    clockTolerance: tolerance ?? 0,
    requireExp: options.requireExp ?? true,
    issuer: options.issuer,
    audience: options.audience,
    trustProxy: options.trustProxy ?? false,
    skipPreflight: options.skipPreflight ?? true,
    tokenCookieName: options.tokenCookieName,
    maxTokenBytes: options.maxTokenBytes ?? DEFAULT_MAX_TOKEN_BYTES,
    verifiedTokenCacheSize: options.verifiedTokenCacheSize ?? DEFAULT_VERIFIED_TOKEN_CACHE_SIZE,
    allowWeakSecret,
    global: options.global ?? true,
  };
}
