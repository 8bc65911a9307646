import type { AuthModuleOptions } from '../auth/auth-module-options.interface';

/**
 * The YAML document as written (snake_case keys), after `_env` / `${VAR}` references are resolved.
 * Later sections (providers, ai, api, prompts) are added here and in config/tollgate.schema.json.
 */
export interface ConfigDocument {
  version: 1;
  server?: ServerSection;
  auth?: AuthSection;
}

export interface ServerSection {
  port?: number;
  host?: string;
  body_limit?: number;
  base_path?: string;
}

export interface StoreOptionsSection {
  url?: string;
  servers?: string[];
  table?: string;
}

/** The seed's option names, spelled as the seed spells them, plus DECISIONS.md A1-A8 extras. */
export interface AuthSection {
  jwt_secret?: string;
  jwt_public_key?: string;
  jwt_algorithm?: AuthModuleOptions['jwtAlgorithm'];
  validate_tenant_id?: boolean;
  tenant_id_header_name?: string;
  validate_subdomain?: boolean;
  validate_pathname_slug?: boolean;
  pathname_slug_pattern?: string;
  payload_mapping?: {
    user_id?: string;
    tenant_id?: string;
    subdomain?: string;
    pathname_slugs?: string;
    role_ids?: string;
  };
  skip_paths?: string[];
  rbac_enabled?: boolean;
  rbac_cache_store?: 'memory' | 'redis' | 'memcached' | 'postgres';
  rbac_cache_store_options?: StoreOptionsSection;
  permissions_cache_store?: 'memory' | 'redis' | 'memcached' | 'postgres';
  permissions_cache_store_options?: StoreOptionsSection;
  cached_permissions_ttl?: number;
  rbac_record_key?: string;
  unauthorized_response?: Record<string, unknown>;
  forbidden_response?: Record<string, unknown>;
  response_codes?: boolean;
  debug_mode?: boolean;
  clock_tolerance?: number;
  require_exp?: boolean;
  issuer?: string | string[];
  audience?: string | string[];
  trust_proxy?: boolean;
  skip_preflight?: boolean;
  token_cookie_name?: string;
  max_token_bytes?: number;
  allow_weak_secret?: boolean;
}

export interface ServerConfig {
  port: number;
  host: string;
  /** Bytes. */
  bodyLimit: number;
  /** '' or a path starting with '/' and without a trailing slash. */
  basePath: string;
}

/** AuthModule options as configured; `jwtSecret` may still be missing (the CLI's rbac commands need none). */
export type AuthSettings = Omit<AuthModuleOptions, 'jwtSecret'> & { jwtSecret?: string };

/** What the rest of the application reads: typed, camelCase, defaults applied. */
export interface TollgateConfig {
  /** The YAML file the values came from, as the user named it; undefined when only defaults and environment apply. */
  file?: string;
  server: ServerConfig;
  /** Present when an `auth:` section or JWT_SECRET configures the AuthModule. */
  auth?: AuthSettings;
  /** The merged document, for sections whose modules map them themselves. */
  document: ConfigDocument;
}

/** One value given outside the file: an environment variable or a command-line flag. */
export interface ConfigOverride {
  /** What the user typed, used in messages: `PORT`, `--port`. */
  source: string;
  /** Key path in the document, e.g. ['server', 'port']. */
  path: string[];
  value: unknown;
}
