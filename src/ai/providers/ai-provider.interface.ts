/** The one interface every provider adapter implements (one file per kind under this folder). */

export const PROVIDER_KINDS = [
  'ollama',
  'openai',
  'anthropic',
  'gemini',
  'mistral',
  'huggingface',
  'deepseek',
  'xai',
  'openai_compatible',
] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** One registration's settings, resolved from YAML, environment and defaults. */
export interface ProviderSettings {
  /** Registration name (unique); defaults to the kind. */
  name: string;
  kind: ProviderKind;
  /** Base URL; every kind has a documented default except openai_compatible. */
  url?: string;
  apiKey?: string;
  chatModel?: string;
  embeddingModel?: string;
  /** Milliseconds. */
  timeoutMs: number;
  /** When set, every returned vector must have exactly this length. */
  embeddingDimensions?: number;
}

export interface ProviderCapabilities {
  generate: boolean;
  embeddings: boolean;
  /** Native array input: one upstream call for a batch. */
  batchEmbeddings: boolean;
  streaming: boolean;
  listModels: boolean;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerateRequest {
  messages: ChatMessage[];
  /** Overrides the registration's chat model. */
  model?: string;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  signal?: AbortSignal;
}

export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

export interface GenerateResult {
  text: string;
  model: string;
  finishReason?: string;
  usage?: TokenUsage;
}

/** One streamed piece: text deltas, then exactly one final chunk carrying `done: true`. */
export type GenerateStreamChunk =
  | { done: false; text: string }
  | { done: true; model: string; finishReason?: string; usage?: TokenUsage };

export interface EmbedRequest {
  inputs: string[];
  model?: string;
  signal?: AbortSignal;
}

export interface EmbedResult {
  /** One vector per input, in input order. */
  embeddings: number[][];
  model: string;
  usage?: TokenUsage;
}

export interface ModelInfo {
  id: string;
  provider: string;
  ownedBy?: string;
}

export type HealthStatus = 'healthy' | 'unhealthy' | 'unavailable';

export interface HealthResult {
  provider: string;
  kind: ProviderKind;
  /** healthy: reachable and the configured model is ready; unhealthy: reachable but not ready; unavailable: unreachable. */
  status: HealthStatus;
  reachable: boolean;
  ready: boolean;
  model?: string;
  /** Tollgate's own sanitized message; never an upstream body. */
  error?: string;
  latencyMs: number;
}

export interface AiProvider {
  readonly name: string;
  readonly kind: ProviderKind;
  readonly capabilities: ProviderCapabilities;
  /** Settings without secrets, for /v1/providers. */
  describe(): Record<string, unknown>;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** Present when `capabilities.streaming`. */
  generateStream?(request: GenerateRequest): AsyncIterable<GenerateStreamChunk>;
  /** Throws CapabilityNotSupportedError on generation-only kinds. */
  embed(request: EmbedRequest): Promise<EmbedResult>;
  listModels(signal?: AbortSignal): Promise<ModelInfo[]>;
  healthCheck(): Promise<HealthResult>;
  /** Releases connection pools. */
  close(): Promise<void>;
}
