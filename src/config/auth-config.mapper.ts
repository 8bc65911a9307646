import type { AuthModuleOptions, CacheStoreOptions, PayloadMapping } from '../auth/auth-module-options.interface';
import { ConfigError } from './config.error';
import type { AuthSection, AuthSettings, StoreOptionsSection, TollgateConfig } from './config.types';

type ScalarKey = Exclude<
  keyof AuthSection,
  'payload_mapping' | 'rbac_cache_store_options' | 'permissions_cache_store_options'
>;

/** YAML key -> AuthModuleOptions key for the options that map one to one. */
const SCALAR_KEYS: Record<ScalarKey, keyof AuthSettings> = {
  jwt_secret: 'jwtSecret',
  jwt_public_key: 'jwtPublicKey',
  jwt_algorithm: 'jwtAlgorithm',
  validate_tenant_id: 'validateTenantId',
  tenant_id_header_name: 'tenantIdHeaderName',
  validate_subdomain: 'validateSubdomain',
  validate_pathname_slug: 'validatePathnameSlug',
  pathname_slug_pattern: 'pathnameSlugPattern',
  skip_paths: 'skipPaths',
  rbac_enabled: 'rbacEnabled',
  rbac_cache_store: 'rbacCacheStore',
  permissions_cache_store: 'permissionsCacheStore',
  cached_permissions_ttl: 'cachedPermissionsTtl',
  rbac_record_key: 'rbacRecordKey',
  // Response bodies are passed through untouched: their keys are the user's wire format.
  unauthorized_response: 'unauthorizedResponse',
  forbidden_response: 'forbiddenResponse',
  response_codes: 'responseCodes',
  debug_mode: 'debugMode',
  clock_tolerance: 'clockTolerance',
  require_exp: 'requireExp',
  issuer: 'issuer',
  audience: 'audience',
  trust_proxy: 'trustProxy',
  skip_preflight: 'skipPreflight',
  token_cookie_name: 'tokenCookieName',
  max_token_bytes: 'maxTokenBytes',
  allow_weak_secret: 'allowWeakSecret',
};

const MAPPING_KEYS: Record<keyof NonNullable<AuthSection['payload_mapping']>, keyof PayloadMapping> = {
  user_id: 'userId',
  tenant_id: 'tenantId',
  subdomain: 'subdomain',
  pathname_slugs: 'pathnameSlugs',
  role_ids: 'roleIds',
};

/**
 * `auth:` section (snake_case, validated) -> AuthModule options (camelCase). Only keys the user set are
 * passed, so AuthModule's own defaults stay the single source of truth for the rest.
 */
export function toAuthSettings(section: AuthSection): AuthSettings {
  const out: Record<string, unknown> = {};
  for (const [yamlKey, optionKey] of Object.entries(SCALAR_KEYS)) {
    const value = section[yamlKey as ScalarKey];
    if (value !== undefined) out[optionKey] = value;
  }
  if (section.payload_mapping) {
    const mapping: Partial<PayloadMapping> = {};
    for (const [yamlKey, optionKey] of Object.entries(MAPPING_KEYS)) {
      const claim = section.payload_mapping[yamlKey as keyof typeof MAPPING_KEYS];
      if (claim !== undefined) mapping[optionKey] = claim;
    }
    out.payloadMapping = mapping;
  }
  if (section.rbac_cache_store_options) out.rbacCacheStoreOptions = toStoreOptions(section.rbac_cache_store_options);
  if (section.permissions_cache_store_options) {
    out.permissionsCacheStoreOptions = toStoreOptions(section.permissions_cache_store_options);
  }
  return out as AuthSettings;
}

function toStoreOptions(section: StoreOptionsSection): CacheStoreOptions {
  return { ...section };
}

/**
 * The options for `AuthModule.forRoot()`; the server needs a verification key, the CLI's rbac commands do not.
 * For RS/PS/ES a `jwt_public_key` alone is enough: it is then the verification key.
 */
export function requireAuthModuleOptions(config: Pick<TollgateConfig, 'auth' | 'file'>): AuthModuleOptions {
  const auth = config.auth;
  if (!auth) throw new ConfigError(['auth: is not configured (add an auth: section or set JWT_SECRET)']);
  const jwtSecret = auth.jwtSecret ?? (typeof auth.jwtPublicKey === 'string' ? auth.jwtPublicKey : undefined);
  if (jwtSecret === undefined) {
    throw new ConfigError([
      `${config.file ?? 'configuration'}: auth.jwt_secret: is required (set auth.jwt_secret, auth.jwt_secret_env or the JWT_SECRET environment variable)`,
    ]);
  }
  return { ...auth, jwtSecret };
}
