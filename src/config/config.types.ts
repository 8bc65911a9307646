import type { AuthModuleOptions } from '../auth/auth-module-options.interface';
import type { DeploymentHealthSettings } from '../ai/client/ai-client.options';
import type { ModelAliases } from '../ai/client/model-routing';
import type { ProviderKind, ProviderSettings } from '../ai/providers/ai-provider.interface';
import type { PromptTemplateSet } from '../ai/prompts/prompt-templates';
import type { ImageDownloadLimits } from '../ai/providers/image-downloads';
import type { DocumentBounds } from '../ai/documents/document-source.interface';
import type { SearchModuleOptions } from '../ai/tools/search.service';
import type { VectorStoreSettings } from '../ai/vector/vector-store.interface';
import type { AgentLimits } from '../ai/agent/agent-limits';
import type { McpSettings } from '../ai/mcp/mcp-settings';
import type { LimitsSettings } from '../limits/limits-settings';
import type { LedgerSettings } from '../governance/ledger/ledger-settings';
import type { GovernanceSettings } from '../governance/governance-settings';
import type { BudgetsSettings } from '../governance/budgets/budgets-settings';

/**
 * The YAML document as written (snake_case keys), after `_env` / `${VAR}` references are resolved.
 * Every section is described in config/tollgate.schema.json.
 */

/** A provider entry the environment created (not one it only filled), with the variables that made it. */
export interface EnvironmentProvider {
  name: string;
  variables: string[];
}

export interface ConfigDocument {
  version: 1;
  server?: ServerSection;
  auth?: AuthSection;
  ai?: AiSection;
  providers?: Record<string, ProviderSection>;
  prompts?: PromptsSection;
  api?: ApiSection;
  tools?: Record<string, ToolSection>;
  search?: SearchSection;
  documents?: DocumentsSection;
  vector?: VectorSection;
  agent?: AgentSection;
  mcp?: McpSection;
  metrics?: MetricsSection;
  logs?: LogsSection;
  observability?: ObservabilitySection;
  limits?: LimitsSection;
  governance?: GovernanceSection;
}

/** The `governance:` section as written in YAML (docs/governance.md). */
export interface GovernanceSection {
  keys?: { store?: 'memory' | 'redis' | 'postgres'; url?: string; key_prefix?: string; table?: string };
  admin_token?: string;
  admin_roles?: string[];
  operator_roles?: string[];
  models?: { tenants?: Record<string, string[]>; roles?: Record<string, string[]> };
  ledger?: LedgerSection;
  pricing?: PricingSection;
  budgets?: {
    store?: 'memory' | 'redis';
    url?: string;
    key_prefix?: string;
    refresh?: number;
    rules?: GovernanceRuleSection[];
  };
  limits?: { rules?: GovernanceRuleSection[] };
  claims?: { budget_usd?: string; budget_tokens?: string; budget_period?: string; rpm?: string; tpm?: string };
}

export interface LedgerSection {
  enabled?: boolean;
  store?: 'memory' | 'postgres';
  url?: string;
  table?: string;
  retention_days?: number;
  max_entries?: number;
  max_bytes?: number;
  batch_size?: number;
  /** Seconds. */
  flush_interval?: number;
  metrics_max_tenants?: number;
}

export interface PricingSection {
  use_defaults?: boolean;
  /** Admit unpriced models to callers held to a dollar budget (default false: 403 model_not_priced). */
  allow_unpriced?: boolean;
  /** Keyed `provider/model`; USD per million tokens. */
  models?: Record<string, { input: number; output: number; cached_input?: number; cache_write?: number; cache_write_1h?: number; web_search?: number }>;
}

/** One search tool (docs/configuration.md); which keys apply depends on `kind`. */
export interface ToolSection {
  kind?: 'searxng' | 'searchapi' | 'group';
  url?: string;
  api_key?: string;
  timeout?: number;
  max_response_bytes?: number;
  allow_private_network?: boolean;
  language?: string;
  categories?: string[];
  engine?: string;
  location?: string;
  hl?: string;
  gl?: string;
  tools?: string[];
}

export interface SearchSection {
  default_tool?: string;
  default_limit?: number;
  max_limit?: number;
  max_query_chars?: number;
  timeout?: number;
  max_response_bytes?: number;
}

export interface DocumentsSection {
  max_documents?: number;
  max_bytes?: number;
}

export interface AgentSection {
  max_loops?: number;
  max_task_bytes?: number;
  max_response_bytes?: number;
  max_context_bytes?: number;
  max_action_bytes?: number;
  max_observation_bytes?: number;
  tool_protocol?: 'auto' | 'prompt';
  audit_log?: string;
}

export interface RateLimitSection {
  limit: number;
  /** Seconds. */
  window: number;
}

export interface LimitsSection {
  enabled?: boolean;
  store?: 'memory' | 'redis';
  redis_url?: string;
  redis_key_prefix?: string;
  tenant?: RateLimitSection;
  token?: RateLimitSection;
  routes?: RouteGroupSection[];
}

export interface RouteGroupSection {
  name: string;
  paths: string[];
  tenant?: RateLimitSection;
  token?: RateLimitSection;
}

export interface McpSection {
  enabled?: boolean;
  path?: string;
  auth?: 'token' | 'jwt' | 'none';
  token?: string;
  allowed_origins?: string[];
  max_body_bytes?: number;
  session_ttl?: number;
  session_store?: 'memory' | 'redis';
  redis_url?: string;
  redis_key_prefix?: string;
}

export interface VectorSection {
  backend?: 'pglite' | 'postgres';
  url?: string;
  data_dir?: string;
  table?: string;
  dimensions?: number;
  metric?: 'cosine' | 'euclidean' | 'inner_product';
  max_limit?: number;
}

/** The `ai:` section (docs/configuration.md); times in seconds. */
export interface AiSection {
  default_provider?: string;
  timeout?: number;
  retry_attempts?: number;
  retry_delay?: number;
  enable_fallback?: boolean;
  fallback_providers?: string[];
  model_aliases?: ModelAliases;
  deployment_health?: {
    failures?: number;
    window?: number;
    cooldown?: number;
    retry_after?: boolean;
    wait?: number;
    store?: 'memory' | 'redis';
    url?: string;
    key_prefix?: string;
  };
  sensitive_keys?: string[];
  excluded_context_fields?: string[];
  health_cache_ttl?: number;
  max_batch_inputs?: number;
  responses?: { store?: 'memory' | 'redis' | 'postgres'; url?: string; key_prefix?: string; table?: string; retention?: number; max_stored?: number };
  images?: ImagesSection;
}

/** `ai.images`: bounds of the image URLs downloaded for Ollama and Gemini; timeout in seconds. */
export interface ImagesSection {
  max_per_request?: number;
  max_concurrent_per_request?: number;
  max_concurrent?: number;
  max_bytes?: number;
  max_total_bytes?: number;
  timeout?: number;
}

/** One `providers:` entry (docs/configuration.md). */
export interface ProviderSection {
  models?: string[];
  kind?: ProviderKind;
  url?: string;
  api_key?: string;
  chat_model?: string;
  embedding_model?: string;
  model?: string;
  timeout?: number;
  embedding_dimensions?: number;
  azure?: {
    api_version?: string;
    deployments?: Record<string, string>;
    entra_token?: string;
    entra?: { tenant_id: string; client_id: string; client_secret: string; authority?: string };
  };
  vertex?: { project: string; location: string; credentials_file?: string; access_token?: string };
  bedrock?: { region: string; profile?: string };
}

export interface PromptTemplatesSection {
  system_prompt?: string;
  with_context?: string;
  without_context?: string;
}

export interface PromptsSection extends PromptTemplatesSection {
  file?: string;
  providers?: Record<string, PromptTemplatesSection>;
}

export interface ApiSection {
  auth?: ApiAuthMode;
  token?: string;
}

export interface ServerSection {
  port?: number;
  host?: string;
  body_limit?: number;
  chat_body_limit?: number;
  json_value_limit?: number;
  base_path?: string;
  shutdown_timeout?: number;
  shutdown_grace?: number;
}

export interface StoreOptionsSection {
  url?: string;
  servers?: string[];
  table?: string;
}

/** The `auth:` option names as docs/auth.md spells them, plus the extras of docs/decisions.md A1-A8. */
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
  rbac_record_max_bytes?: number;
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
  /** Bytes, for the chat routes (`/v1/generate`, `/openai/v1/chat/completions`), which carry base64 images. */
  chatBodyLimit: number;
  /** Values a JSON body may hold (each member of an object counts as one), checked before it is parsed. */
  jsonValueLimit: number;
  /** '' or a path starting with '/' and without a trailing slash. */
  basePath: string;
  /** How long in-flight requests may run after SIGTERM / SIGINT. */
  shutdownTimeoutMs: number;
  /** How long after SIGTERM the server reports not ready but keeps serving, before it drains; at most shutdownTimeoutMs. */
  shutdownGraceMs: number;
}

/** AuthModule options as configured; `jwtSecret` may still be missing (the CLI's rbac commands need none). */
export type AuthSettings = Omit<AuthModuleOptions, 'jwtSecret'> & { jwtSecret?: string };

export type ApiAuthMode = 'token' | 'jwt' | 'none';

/** Where stored responses of /openai/v1/responses live, and for how long. */
export interface ResponseStoreSettings {
  store: 'memory' | 'redis' | 'postgres';
  /** Redis URL with store redis, PostgreSQL URL with store postgres. */
  url?: string;
  keyPrefix: string;
  table: string;
  retentionMs: number;
  maxStored: number;
}

/** The AI gateway as configured: registrations resolved, defaults applied, times in milliseconds. */
export interface AiSettings {
  /** In registration order (the default fallback order). */
  providers: ProviderSettings[];
  defaultProvider: string;
  retryAttempts: number;
  retryDelayMs: number;
  enableFallback: boolean;
  fallbackProviders?: string[];
  modelAliases?: ModelAliases;
  deployments?: DeploymentHealthSettings;
  sensitiveKeys: string[];
  excludedContextFields: string[];
  healthCacheMs: number;
  maxBatchInputs: number;
  /** Stored responses of /openai/v1/responses. */
  responses: ResponseStoreSettings;
  /** Bounds of image downloads, for the whole process. */
  images: ImageDownloadLimits;
  prompts: PromptTemplateSet;
  api: { auth: ApiAuthMode; token?: string };
  /** Search tools and their bounds. */
  search: SearchModuleOptions;
  /** Bounds of JSON document sources. */
  documents: DocumentBounds;
  /** Agent limits and the audit log path (absolute). */
  agent: { limits: AgentLimits; auditLog?: string };
}

/** What the rest of the application reads: typed, camelCase, defaults applied. */
export interface TollgateConfig {
  /** The YAML file the values came from, as the user named it; undefined when only defaults and environment apply. */
  file?: string;
  server: ServerConfig;
  /** Present when an `auth:` section or JWT_SECRET configures the AuthModule. */
  auth?: AuthSettings;
  ai: AiSettings;
  /** The vector store `tollgate vector` uses; pglite data_dir resolved to an absolute path. */
  vector: VectorStoreSettings;
  /** The MCP server (Streamable HTTP and stdio). */
  mcp: McpSettings;
  /** Request rate limits (per tenant, per API token). */
  limits: LimitsSettings;
  /** The usage and cost ledger (governance.ledger, governance.pricing). */
  ledger: LedgerSettings;
  /** API keys, their store, the governance administrators and model allow-lists. */
  governance: GovernanceSettings;
  /** Budgets and token-aware rate limits of model calls (`governance.budgets`, `.limits`, `.claims`). */
  budgets: BudgetsSettings;
  /** Providers that environment variables created (the configuration has no `providers:` section), for the start-up log. */
  environmentProviders: EnvironmentProvider[];
  /** The merged document, for sections whose modules map them themselves. */
  document: ConfigDocument;
}

/** The `metrics:` section as written in YAML. */
export interface MetricsSection {
  enabled?: boolean;
  token?: string;
}

/** The `observability:` section as written in YAML. */
export interface ObservabilitySection {
  otel?: OtelSection;
}

/** `observability.otel`: OpenTelemetry traces and GenAI metrics over OTLP/HTTP (docs/operations.md#traces). */
export interface OtelSection {
  enabled?: boolean;
  endpoint?: string;
  headers?: Record<string, string>;
  sampling_ratio?: number;
  capture_content?: boolean;
  service_name?: string;
  metrics?: boolean;
  metrics_interval?: number;
}

/** The `logs:` section as written in YAML. */
export interface LogsSection {
  /** One access line per completed request (default true). */
  requests?: boolean;
}

/** Where a configuration comes from: files it names (prompts.file, agent.audit_log, a pglite data_dir) are relative to it. */
export interface ConfigSource {
  /** Label of the configuration source, for messages. */
  source: string;
  /** The configuration file's absolute path, when there is one. */
  filePath?: string;
  cwd: string;
}

/** One value given outside the file: an environment variable or a command-line flag. */
export interface ConfigOverride {
  /** What the user typed, used in messages: `PORT`, `--port`. */
  source: string;
  /** Key path in the document, e.g. ['server', 'port']. */
  path: string[];
  value: unknown;
}


/** One budget or rate-limit rule as written (dollars, snake_case). */
export interface GovernanceRuleSection {
  scope: string;
  id: string;
  usd?: number;
  tokens?: number;
  period?: string;
  rpm?: number;
  tpm?: number;
}
