/**
 * The GenAI semantic conventions' names Tollgate uses, copied from @opentelemetry/semantic-conventions 1.45's
 * incubating entry point: OpenTelemetry asks instrumentations not to import unstable names at run time, since
 * they may change in a minor release. Tollgate's own attributes are under `tollgate.`.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestStream: 'gen_ai.request.stream',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  responseTimeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  agentName: 'gen_ai.agent.name',
  toolName: 'gen_ai.tool.name',
  tokenType: 'gen_ai.token.type',
  embeddingsDimensionCount: 'gen_ai.embeddings.dimension.count',
} as const;

export const GEN_AI_METRICS = {
  tokenUsage: 'gen_ai.client.token.usage',
  serverRequestDuration: 'gen_ai.server.request.duration',
  serverTimeToFirstToken: 'gen_ai.server.time_to_first_token',
} as const;

/** The conventions' bucket boundaries: tokens (powers of 4) and seconds (doubling from 10 ms). */
export const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
export const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
export const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];

export const TOLLGATE = {
  provider: 'tollgate.provider',
  tenant: 'tollgate.tenant',
  keyId: 'tollgate.key_id',
  budgetDecision: 'tollgate.budget.decision',
  costUsd: 'tollgate.cost_usd',
  requestId: 'tollgate.request_id',
  streamCut: 'tollgate.stream.cut',
} as const;

/** gen_ai.provider.name for each provider kind: the conventions' well-known value, else the kind itself. */
export const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  mistral: 'mistral_ai',
  deepseek: 'deepseek',
  xai: 'x_ai',
  ollama: 'ollama',
  huggingface: 'huggingface',
  openai_compatible: 'openai_compatible',
};
