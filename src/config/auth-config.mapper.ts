import type { AuthModuleOptions, CacheStoreOptions, PayloadMapping } from '../auth/auth-module-options.interface';
import { AuthOptionsError, resolveAuthOptions } from '../auth/auth.options';
import { ConfigError, formatKeyPath } from './config.error';
import { ENVIRONMENT_BINDINGS } from './config-environment';
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
  rbac_record_max_bytes: 'rbacRecordMaxBytes',
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

/** AuthModule option name -> its key under `auth:`, for the problems resolveAuthOptions reports. */
const YAML_KEYS: ReadonlyMap<string, string> = new Map([
  ...Object.entries(SCALAR_KEYS).map(([yamlKey, optionKey]): [string, string] => [optionKey, yamlKey]),
  ['payloadMapping', 'payload_mapping'],
  ['rbacCacheStoreOptions', 'rbac_cache_store_options'],
  ['permissionsCacheStoreOptions', 'permissions_cache_store_options'],
]);
const MAPPING_YAML_KEYS: ReadonlyMap<string, string> = new Map(
  Object.entries(MAPPING_KEYS).map(([yamlKey, optionKey]): [string, string] => [optionKey, yamlKey]),
);

/** The API's routes: /v1 and the provider dialects (OpenAI, Anthropic, Gemini), all answering to the API credential. */
const API_ROUTE_GLOBS = ['/v1/*', '/openai/v1/*', '/anthropic/v1/*', '/gemini/v1beta/*'];

/**
 * The AuthModule options the server mounts: the auth section's, plus skip paths for the /v1 API, its
 * provider-dialect twins and MCP unless they are set to `jwt`: they answer to their own token (docs/decisions.md B3).
 */
export function serverAuthModuleOptions(config: TollgateConfig): AuthModuleOptions {
  const options = requireAuthModuleOptions(config);
  const skipPaths = [...(options.skipPaths ?? [])];
  if (config.ai.api.auth !== 'jwt') skipPaths.push(...API_ROUTE_GLOBS.map((glob) => `${config.server.basePath}${glob}`));
  if (config.mcp.enabled && config.mcp.auth !== 'jwt') skipPaths.push(`${config.server.basePath}${config.mcp.path}`);
  return { ...options, skipPaths };
}

/**
 * What AuthModule refuses when it starts, found by the same resolveAuthOptions it runs, as
 * `<source>: auth.<key>: <message>` lines that name the YAML keys; empty when auth is off or would start.
 */
export function authStartupProblems(config: TollgateConfig, env: NodeJS.ProcessEnv = process.env): string[] {
  if (!config.auth) return [];
  let options: AuthModuleOptions;
  try {
    options = serverAuthModuleOptions(config);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  try {
    resolveAuthOptions(options, env);
    return [];
  } catch (error) {
    if (!(error instanceof AuthOptionsError)) throw error;
    return error.problems.map((problem) => {
      const { key, message } = toYamlProblem(problem);
      return `${sourceOf(key, config, env)}: ${key}: ${message}`;
    });
  }
}

/** `skipPaths[0] must start with "/"` -> `auth.skip_paths[0]` and `must start with "/"`; option names in the text become keys too. */
function toYamlProblem(problem: string): { key: string; message: string } {
  const inText = (text: string) =>
    text.replace(/\b[a-z]+[A-Z][A-Za-z]*\b/g, (word) => (YAML_KEYS.has(word) ? `auth.${YAML_KEYS.get(word)}` : word));
  const subject = /^([A-Za-z]+)((?:\[\d+\]|\.\w+)*) (.*)$/.exec(problem);
  const yamlKey = subject ? YAML_KEYS.get(subject[1]) : undefined;
  if (!subject || !yamlKey) return { key: 'auth', message: inText(problem) };
  const rest = yamlKey === 'payload_mapping' ? subject[2].replace(/\w+/, (key) => MAPPING_YAML_KEYS.get(key) ?? key) : subject[2];
  return { key: `auth.${yamlKey}${rest}`, message: inText(subject[3]) };
}

/** The environment variable that set the key when one did (it beats the file), else the file. */
function sourceOf(key: string, config: Pick<TollgateConfig, 'file'>, env: NodeJS.ProcessEnv): string {
  const binding = ENVIRONMENT_BINDINGS.find(({ path }) => formatKeyPath(path) === key);
  return binding && env[binding.variable] ? binding.variable : (config.file ?? 'configuration');
}
