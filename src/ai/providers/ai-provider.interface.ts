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
  'azure_openai',
  'vertex',
  'bedrock',
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
  /** Further models this registration serves by their bare name (docs/decisions.md B13). */
  models?: string[];
  /** Milliseconds. */
  timeoutMs: number;
  /** When set, every returned vector must have exactly this length. */
  embeddingDimensions?: number;
  /** Kind azure_openai only. */
  azure?: AzureOpenAiSettings;
  /** Kind vertex only. */
  vertex?: VertexSettings;
  /** Kind bedrock only. */
  bedrock?: BedrockSettings;
}

export interface AzureOpenAiSettings {
  /** Set: the deployment-style API (`/openai/deployments/<d>/...?api-version=`); unset: the v1 API (`/openai/v1`). */
  apiVersion?: string;
  /** Model name -> deployment name; a model without an entry is its own deployment name. */
  deployments?: Record<string, string>;
  /** A Microsoft Entra access token, sent as `Authorization: Bearer` instead of the `api-key` header; never refreshed. */
  entraToken?: string;
  /** An app registration whose Entra tokens are fetched and refreshed (client-credentials grant). */
  entra?: AzureEntraSettings;
}

export interface AzureEntraSettings {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** The token endpoint's host; default `https://login.microsoftonline.com` (sovereign clouds have others). */
  authority?: string;
}

export interface VertexSettings {
  project: string;
  location: string;
  /** A service-account (or authorized-user, external-account) key file; else Application Default Credentials. */
  credentialsFile?: string;
  /** A ready OAuth access token, used as is (never refreshed). */
  accessToken?: string;
}

export interface BedrockSettings {
  region: string;
  /** AWS credentials profile; else the standard chain (variables, web identity, profile, instance role). */
  profile?: string;
}

export interface ProviderCapabilities {
  generate: boolean;
  embeddings: boolean;
  /** Native array input: one upstream call for a batch. */
  batchEmbeddings: boolean;
  streaming: boolean;
  listModels: boolean;
  /** Tool definitions, tool choice, assistant tool calls and tool results, in both directions. */
  tools: boolean;
  /** `responseFormat` json_object and json_schema. */
  structuredOutput: boolean;
  /** Image parts in user messages. */
  vision: boolean;
  /** Document parts (PDF and the like, base64) in user messages; absent: none. */
  documents?: boolean;
}

/** What a request may need beyond text generation; a provider without it is refused, never sent a trimmed request. */
export type ModelFeature = 'tools' | 'structuredOutput' | 'vision' | 'documents';

/** An image as the caller gave it: an http(s) URL, or base64 data with its media type. */
export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

/** A document the model reads as a file (a PDF), base64 with its media type and, where the caller gave one, its name. */
export interface DocumentSource {
  mediaType: string;
  data: string;
  name?: string;
}

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; image: ImageSource; detail?: 'auto' | 'low' | 'high' }
  | { type: 'document'; document: DocumentSource };

/**
 * A prompt-cache breakpoint at the end of a message or a tool definition: the prefix up to it may be cached
 * (Anthropic's `cache_control`, Bedrock's `cachePoint`); kinds without explicit caching leave it out
 * (docs/decisions.md B20).
 */
export interface CacheHint {
  ttl?: '5m' | '1h';
}

export interface ToolCall {
  /** The provider's id (or one Tollgate made where the provider has none); tool results refer to it. */
  id: string;
  name: string;
  /** JSON text of the arguments object, as the model wrote it. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string; cache?: CacheHint }
  | { role: 'user'; content: string | ContentPart[]; cache?: CacheHint }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[]; cache?: CacheHint }
  /**
   * A tool's result; `isError` says the tool failed and `content` describes the failure (Anthropic's
   * `is_error`, Gemini's `error` key; the OpenAI shape and Ollama have no such flag and take the content as is).
   */
  | { role: 'tool'; toolCallId: string; content: string; isError?: boolean; cache?: CacheHint };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
  cache?: CacheHint;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean };

/**
 * The caller's request in a provider's own dialect (docs/decisions.md B16, B19). An adapter speaking that dialect
 * sends `body` as given, with only the model, the output-token bound (a budget may set it) and `stream` set, and
 * `headers` beside its own; it still answers the domain result (usage, text, tool calls: what governance and the
 * ledger read), with the upstream's answer itself in `native`. Every other adapter ignores it and translates the
 * domain fields.
 */
export interface NativeRequest {
  /** Anthropic's Messages API, or OpenAI's Responses API (whose body the surface has made self-contained, B19). */
  dialect: NativeDialect;
  body: Readonly<Record<string, unknown>>;
  /** The dialect's own headers the caller sent (Anthropic: `anthropic-version`, `anthropic-beta`; none for Responses). */
  headers: Readonly<Record<string, string>>;
  /**
   * The first field the domain request has no form for (a server tool, a PDF document), as the caller's error
   * names it: set, only a provider that speaks the dialect may take the call (others refuse it naming this, and
   * fallback skips them).
   */
  nativeOnly?: string;
  /**
   * The first field only the dialect's own API takes, not a cloud that speaks it (Anthropic's MCP connector,
   * Files API documents, web fetch and code execution, which Claude on Vertex lacks): set, a provider of another
   * kind refuses it naming this, though it speaks the dialect. Such a field is in `nativeOnly` too.
   */
  firstPartyOnly?: string;
  /**
   * The fewest output tokens the body can be sent with (thinking needs `max_tokens` above its 1,024-token
   * minimum budget): a budget that grants fewer refuses the call instead of sending one the upstream refuses.
   */
  leastMaxTokens?: number;
}

export type NativeDialect = 'anthropic-messages' | 'openai-responses';

/** A token count of a request in a provider's dialect, for the model routing chose (undefined: the configured one). */
export interface NativeCountRequest {
  native: NativeRequest;
  model?: string;
  signal?: AbortSignal;
}

/** One upstream server-sent event as it arrived: its name and its data text, byte for byte. */
export interface NativeEvent {
  event: string;
  data: string;
  /** The data as the adapter parsed it, where it read the event, so the surface need not parse it again; not to be changed. */
  parsed?: Record<string, unknown>;
}

export interface GenerateRequest {
  messages: ChatMessage[];
  /** Overrides the registration's chat model. */
  model?: string;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  /** Top-k sampling: Anthropic's `top_k`, Gemini's `topK`, Ollama's `options.top_k`; refused by kinds without it. */
  topK?: number;
  /**
   * `topK` is a default a client sends on every request (Gemini CLI's `topK: 64`): kinds without top-k leave it
   * out instead of refusing it (docs/decisions.md B16).
   */
  topKOptional?: boolean;
  /** The caller's own request, for an adapter of its dialect (docs/decisions.md B16). */
  native?: NativeRequest;
  signal?: AbortSignal;
  /** Handed to the upstream client: told when the request went out (UpstreamRequestOptions.onSent). */
  onSent?: () => void;
}

export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  /** Input tokens served from the provider's prompt cache (part of inputTokens). */
  cachedInputTokens?: number;
  /** Output tokens spent on reasoning (part of outputTokens). */
  reasoningTokens?: number;
  /** Input tokens written to the provider's prompt cache (part of inputTokens; Anthropic's `cache_creation_input_tokens`). */
  cacheWriteInputTokens?: number;
  /** The part of cacheWriteInputTokens written for an hour (Anthropic's 1-hour tier; the rest is its 5-minute tier). */
  cacheWrite1hInputTokens?: number;
  /** Web searches the model's server tool made (Anthropic's `server_tool_use.web_search_requests`), billed per search. */
  webSearchRequests?: number;
}

/**
 * Why generation stopped, in OpenAI's words: `stop`, `length`, `tool_calls`, `content_filter`; each adapter
 * maps its provider's reasons onto these.
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | (string & {});

export interface GenerateResult {
  text: string;
  model: string;
  finishReason?: FinishReason;
  usage?: TokenUsage;
  /** The calls the model asks for, in order; finishReason is then `tool_calls`. */
  toolCalls?: ToolCall[];
  /** The upstream's answer as it came, when the request was sent in its native dialect. */
  native?: Record<string, unknown>;
}

/**
 * A piece of one tool call: the first piece of a call carries its `id` and `name`, later pieces more of its
 * `arguments` text. `index` orders calls within the answer (several may stream interleaved).
 */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

/**
 * One streamed piece: text and tool-call deltas, then exactly one final chunk carrying `done: true`. A stream
 * sent in its native dialect carries every upstream event in `native`, in order, on the chunk of the first event
 * from it on that yielded one (events that translate to nothing may share a chunk of empty text).
 */
export type GenerateStreamChunk =
  | { done: false; text: string; toolCalls?: ToolCallDelta[]; native?: NativeEvent[] }
  | { done: true; model: string; finishReason?: FinishReason; usage?: TokenUsage; native?: NativeEvent[] };

export interface EmbedRequest {
  inputs: string[];
  model?: string;
  signal?: AbortSignal;
  /** As GenerateRequest.onSent. */
  onSent?: () => void;
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
  /**
   * Whether `model` (the registration's chat model when undefined) has `feature`, for providers whose model
   * families differ; without it, `capabilities[feature]` answers for every model.
   */
  supportsFeature?(feature: ModelFeature, model: string | undefined): boolean;
  /** Whether requests in `dialect` go to `model` as the caller wrote them (GenerateRequest.native); absent: never. */
  speaksNative?(dialect: NativeDialect, model: string | undefined): boolean;
  /**
   * The upstream's own token count of a request in a dialect it speaks (Anthropic's `count_tokens`), its answer as
   * sent; present on providers that have such an endpoint.
   */
  countNativeTokens?(request: NativeCountRequest): Promise<Record<string, unknown>>;
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
