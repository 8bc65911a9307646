/**
 * The AI gateway's defaults (docs/decisions.md B1-B3), in milliseconds: AiModule, the configuration file's
 * `ai:` section and the OpenAI-compatible surface all take them from here.
 */
export const AI_DEFAULTS = Object.freeze({
  /** Per provider call, unless the provider's registration sets its own. */
  timeoutMs: 30_000,
  /** Retries after the first try. */
  retryAttempts: 3,
  /** Wait before the first retry; doubled for each further one. */
  retryDelayMs: 1000,
  /** Used when registered; otherwise the first registration is the default. */
  defaultProvider: 'ollama',
  enableFallback: true,
  /** How long /readyz reuses provider health. */
  healthCacheMs: 5000,
  /** Inputs per batch embeddings call. */
  maxBatchInputs: 32,
  /** How long a stored response of /openai/v1/responses can be retrieved and continued (OpenAI keeps them 30 days). */
  responseRetentionMs: 3_600_000,
  /** Stored responses kept at most: by the memory store per process and the PostgreSQL store in all (the oldest of whoever holds the most go first), by the Redis store per tenant. */
  maxStoredResponses: 10_000,
  /** Prefix of the Redis keys of stored responses. */
  responseKeyPrefix: 'tollgate:responses:',
  /** PostgreSQL table of stored responses (and `<table>_items`). */
  responseTable: 'tollgate_responses',
});
