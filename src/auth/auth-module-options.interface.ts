import type { Cache } from 'cache-manager';
import type { KeyObject } from 'node:crypto';

/** The signature algorithms a deployment may configure (docs/decisions.md A2). */
export const JWT_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

export const CACHE_STORE_KINDS = ['memory', 'redis', 'memcached', 'postgres'] as const;
export type CacheStoreKind = (typeof CACHE_STORE_KINDS)[number];

/** Store-specific options: `url` for redis and postgres, `servers` (host:port) for memcached. */
export interface CacheStoreOptions {
  url?: string;
  servers?: string[];
  /** Postgres only: table that holds the entries (default `keyv`). */
  table?: string;
}

/** A store given by kind, or a cache-manager `Cache` the host already built. */
export type CacheStoreSetting = CacheStoreKind | Cache;

/** Internal key -> name of the JWT claim that supplies it. */
export interface PayloadMapping {
  userId: string;
  tenantId: string;
  subdomain: string;
  pathnameSlugs: string;
  roleIds: string;
}

export type JwtPayload = Record<string, unknown>;

/**
 * Framework request as the guard sees it (Fastify's request; `raw` is Node's IncomingMessage).
 * Kept structural so the validator signature does not force a Fastify import on users.
 */
export interface AuthRequest {
  url: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  raw?: unknown;
  [key: string | symbol]: unknown;
}

export type CustomPayloadValidator = (
  payload: JwtPayload,
  request: AuthRequest,
) => boolean | undefined | Promise<boolean | undefined>;

/** A skip path: exact string, `prefix/*`, `%r{regex}`, or a RegExp (docs/decisions.md A4). */
export type SkipPath = string | RegExp;

/** What `AuthModule.forRoot()` accepts. Every option of docs/configuration.md, camelCased. */
export interface AuthModuleOptions {
  jwtSecret: string | Buffer | KeyObject;
  /** PEM public key for RS/PS/ES algorithms when `jwtSecret` is not itself the public key. */
  jwtPublicKey?: string | KeyObject;
  jwtAlgorithm?: JwtAlgorithm;
  validateTenantId?: boolean;
  tenantIdHeaderName?: string;
  validateSubdomain?: boolean;
  validatePathnameSlug?: boolean;
  pathnameSlugPattern?: RegExp | string;
  payloadMapping?: Partial<PayloadMapping>;
  skipPaths?: SkipPath[];
  rbacEnabled?: boolean;
  rbacCacheStore?: CacheStoreSetting;
  rbacCacheStoreOptions?: CacheStoreOptions;
  permissionsCacheStore?: CacheStoreSetting;
  permissionsCacheStoreOptions?: CacheStoreOptions;
  /** Seconds. */
  cachedPermissionsTtl?: number;
  /** Key of the RBAC record inside `rbacCacheStore`. */
  rbacRecordKey?: string;
  /** How long (ms) a process may serve the RBAC record from memory before re-reading the store. */
  rbacRecordRefreshMs?: number;
  /** Largest RBAC record accepted, in bytes of compact JSON (default 1 MiB). */
  rbacRecordMaxBytes?: number;
  unauthorizedResponse?: Record<string, unknown>;
  forbiddenResponse?: Record<string, unknown>;
  /** Add a machine-readable `code` to 401/403 bodies (default true). */
  responseCodes?: boolean;
  customPayloadValidator?: CustomPayloadValidator;
  debugMode?: boolean;
  /** Seconds of leeway for exp, nbf and iat. */
  clockTolerance?: number;
  requireExp?: boolean;
  issuer?: string | string[];
  audience?: string | string[];
  trustProxy?: boolean;
  skipPreflight?: boolean;
  tokenCookieName?: string;
  maxTokenBytes?: number;
  /** How many verified tokens to remember so repeat requests skip the signature check (0 = none). */
  verifiedTokenCacheSize?: number;
  allowWeakSecret?: boolean;
  /** Register both guards as APP_GUARD (default true); false leaves them to `@UseGuards()`. */
  global?: boolean;
}

/** Options after defaults and validation: what the guards read. */
export interface ResolvedAuthOptions {
  jwtAlgorithm: JwtAlgorithm;
  /** The verification key, built once at start. */
  verificationKey: KeyObject;
  validateTenantId: boolean;
  /** Lower-cased, as Node stores incoming header names. */
  tenantIdHeaderName: string;
  validateSubdomain: boolean;
  validatePathnameSlug: boolean;
  pathnameSlugPattern: RegExp;
  payloadMapping: PayloadMapping;
  skipPaths: SkipPath[];
  rbacEnabled: boolean;
  rbacCacheStore?: CacheStoreSetting;
  rbacCacheStoreOptions: CacheStoreOptions;
  permissionsCacheStore?: CacheStoreSetting;
  permissionsCacheStoreOptions: CacheStoreOptions;
  cachedPermissionsTtl: number;
  rbacRecordKey: string;
  rbacRecordRefreshMs: number;
  rbacRecordMaxBytes: number;
  unauthorizedResponse: Record<string, unknown>;
  forbiddenResponse: Record<string, unknown>;
  responseCodes: boolean;
  customPayloadValidator?: CustomPayloadValidator;
  debugMode: boolean;
  clockTolerance: number;
  requireExp: boolean;
  issuer?: string | string[];
  audience?: string | string[];
  trustProxy: boolean;
  skipPreflight: boolean;
  tokenCookieName?: string;
  maxTokenBytes: number;
  verifiedTokenCacheSize: number;
  allowWeakSecret: boolean;
  global: boolean;
}
