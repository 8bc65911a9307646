import type { AgentModuleOptions } from './agent/agent-module-options.interface';
import type { DeploymentHealthSettings } from './client/ai-client.options';
import type { ModelAliases } from './client/model-routing';
import type { DocumentBounds } from './documents/document-source.interface';
import type { ApiAuthHook } from '../http/api-auth.guard';
import type { PromptTemplateSet } from './prompts/prompt-templates';
import type { ProviderSettings } from './providers/ai-provider.interface';
import type { ImageDownloadLimits } from './providers/image-downloads';
import type { SearchModuleOptions } from './tools/search.service';

/**
 * Options of `AiModule.forRoot()`. Tollgate's server builds them from the configuration file; a host app
 * can pass them directly. Times are milliseconds; unset values take docs/decisions.md B1-B3 defaults.
 */
export interface AiModuleOptions {
  /** Registrations in fallback order; names must be unique. */
  providers: ProviderSettings[];
  /** Default: `ollama` when registered, else the first registration. */
  defaultProvider?: string;
  /** Retries after the first try (default 3). */
  retryAttempts?: number;
  /** Wait before the first retry (default 1000). */
  retryDelayMs?: number;
  /** Default true; a call can still disable fallback for itself. */
  enableFallback?: boolean;
  /** Ordered fallback candidates of a call that names no model; default every registration in order. */
  fallbackProviders?: string[];
  /** Alias -> `provider/model` targets in fallback order (docs/decisions.md B13), or its deployments and strategy (B18). */
  modelAliases?: ModelAliases;
  /** Cool-downs of the deployments of aliases that have them (docs/decisions.md B18); defaults: 3 failures of the last 10 calls, 30 s, no wait. */
  deployments?: DeploymentHealthSettings;
  /** Added to api_key, password, token and secret. */
  sensitiveKeys?: string[];
  excludedContextFields?: string[];
  /** How long /readyz reuses provider health (default 5000). */
  healthCacheMs?: number;
  /** Inputs per batch embeddings call (default 32). */
  maxBatchInputs?: number;
  /** Stored responses of /openai/v1/responses (default in memory, 1 hour, 10 000 responses). */
  responses?: { store?: 'memory' | 'redis' | 'postgres'; url?: string; keyPrefix?: string; table?: string; retentionMs?: number; maxStored?: number };
  /** Bounds of the image URLs Ollama and Gemini download (default DEFAULT_IMAGE_DOWNLOAD_LIMITS), for the whole module. */
  images?: Partial<ImageDownloadLimits>;
  prompts?: Partial<PromptTemplateSet>;
  /** Search tools and bounds; without tools, /v1/search answers 400 tool_not_configured. */
  search?: SearchModuleOptions;
  /** Bounds of the `documents` field of /v1/generate (default 100 documents, 1 MiB). */
  documents?: DocumentBounds;
  /** Agent limits, audit log, generic tools, telemetry hooks, tool-call veto and the HTTP context hook. */
  agent?: AgentModuleOptions;
  api?: {
    /** token (default): bearer token or `hook`; jwt: AuthModule's global guard protects the API; none: no check. */
    auth?: 'token' | 'jwt' | 'none';
    /** Expected bearer token; with neither token nor hook every /v1 call is rejected. */
    token?: string;
    /** Replaces the bearer-token check: receives the request, returns truthy to allow it. */
    hook?: ApiAuthHook;
  };
}
