import type { ContextRenderingOptions } from '../prompts/context-rendering';
import type { PromptTemplateSet } from '../prompts/prompt-templates';
import type { ModelAliases } from './model-routing';
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
}
