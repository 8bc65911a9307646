import type { ContextRenderingOptions } from '../prompts/context-rendering';
import type { PromptTemplateSet } from '../prompts/prompt-templates';
import type { ModelAliases } from './model-routing';
import type { CooldownPolicy } from './deployment-health';
import type { RetryPolicy } from './retry';

/** Everything the client needs besides the providers themselves. */
export interface AiClientOptions {
  /** Registration name used when a call names none. */
  defaultProvider: string;
  retry: RetryPolicy;
  fallback: {
    /** Global switch; a call can still turn fallback off for itself. */
    enabled: boolean;
    /** Ordered candidates; unset means every registered provider in registration order. */
    providers?: string[];
  };
  /** `ai.model_aliases`: names callers may use, each standing for `provider/model` targets in fallback order. */
  modelAliases?: ModelAliases;
  prompts: PromptTemplateSet;
  context: ContextRenderingOptions;
  /** Added to the built-in sensitive keys when provider information is shown. */
  sensitiveKeys: string[];
  limits: {
    /** Inputs per batch embedding call (docs/decisions.md B3: 32). */
    maxBatchInputs: number;
  };
  /** How long health results answer /readyz before providers are asked again. */
  healthCacheMs: number;
  /** Cool-downs of the deployments of aliases that have them (docs/decisions.md B18); defaults when unset. */
  deployments?: DeploymentHealthSettings;
}

/** `ai.deployment_health`, times in milliseconds. */
export interface DeploymentHealthSettings {
  cooldown: CooldownPolicy;
  /** How long a call whose every deployment cools down may wait for the first to come back; 0 refuses at once. */
  waitMs: number;
  /** Shares cool-downs with every process on this Redis; this process only when unset. */
  redisUrl?: string;
  keyPrefix?: string;
}
