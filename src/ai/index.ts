/** `tollgate/ai`: the AI gateway for a host app (AiModule, AiClient, search, documents, vectors, agent, MCP). */
export { AiModule } from './ai.module';
export type { AiModuleOptions } from './ai-module-options.interface';
export {
  AiClient,
  type CallOptions,
  type GenerateOptions,
  type EmbeddingOptions,
  type GenerateResponse,
  type GenerateStreamEvent,
  type EmbeddingResponse,
  type BatchEmbeddingResponse,
} from './client/ai-client';
export {
  SERVICE_REQUEST_EVENT,
  SERVICE_REQUEST_CHANNEL,
  PROVIDER_FALLBACK_CHANNEL,
  type ProviderFallbackEvent,
  type ServiceRequestEvent,
  type ServiceRequestPayload,
} from './client/service-request.events';
export {
  TollgateError,
  ConnectionError,
  TimeoutError,
  AuthenticationError,
  RateLimitError,
  ModelNotAvailableError,
  InvalidResponseError,
  ProviderError,
  InvalidRequestError,
  UnknownProviderError,
  CapabilityNotSupportedError,
} from './errors';
export { ApiExceptionFilter, ERROR_SHAPES } from '../http/api-exception.filter';
export type { ErrorShape } from '../http/error-shapes';
export { DIALECT_ERROR_SHAPES } from './http/dialect-error-shapes';
export { installRequestIdHeader, requestIdAdapterOptions } from '../http/request-id';
export {
  SearchService,
  WEB_SEARCH_TOOL,
  type SearchModuleOptions,
  type SearchOptions,
  type SearchAndGenerateOptions,
  type SearchAndGenerateResponse,
} from './tools/search.service';
export type {
  SearchTool,
  SearchResult,
  SearchResponse,
  SearchCallOptions,
  SearchToolSettings,
  SearxngToolSettings,
  SearchApiToolSettings,
  ToolGroupSettings,
} from './tools/search-tool.interface';
export { ToolNotConfiguredError } from './tools/tool-errors';
export { FileDocumentSource } from './documents/file-document-source';
export { MemoryDocumentSource } from './documents/memory-document-source';
export { KeyValueDocumentSource } from './documents/key-value-document-source';
export { DocumentSourceError } from './documents/document-errors';
export type { DocumentBounds, DocumentSource, KeyValueReader } from './documents/document-source.interface';
export { DEFAULT_IMAGE_DOWNLOAD_LIMITS, type ImageDownloadLimits } from './providers/image-downloads';
export { PgVectorStore, type PgVectorStoreOptions } from './vector/pgvector-store';
export { VectorStoreError } from './vector/vector-errors';
export { createVectorStore } from './vector/vector-store.factory';
export {
  VECTOR_METRICS,
  type VectorMetric,
  type VectorRecord,
  type VectorQuery,
  type VectorMatch,
  type VectorStore,
  type VectorBackend,
  type VectorStoreSettings,
} from './vector/vector-store.interface';
export {
  AgentService,
  type AgentRunOptions,
  type AgentResult,
  type AgentActionRecord,
} from './agent/agent.service';
export { AgentToolset, searchAgentTools } from './agent/agent-toolset';
export { JsonlAuditSink } from './agent/jsonl-audit-sink';
export { AgentProtocolError, type AgentProtocolViolation } from './agent/agent-errors';
export { ToolArgumentsError, type ToolFailureCategory } from './agent/tool-failure-category';
export { DEFAULT_AGENT_LIMITS, resolveAgentLimits, type AgentLimits } from './agent/agent-limits';
export { truncateUtf8 } from './agent/utf8-truncate';
export { serializeObservation } from './agent/agent-observation';
export {
  AGENT_EVENT_CHANNEL,
  MAX_TELEMETRY_HOOKS,
  type AgentEventName,
  type AgentTelemetryEvent,
  type AgentTelemetryHook,
} from './agent/agent-telemetry';
export type { AgentTool, AgentToolCall, AgentRunContext, AgentAuthorizer } from './agent/agent-tool.interface';
export type { AgentModuleOptions, AgentContextHook } from './agent/agent-module-options.interface';
export { McpModule } from './mcp/mcp.module';
export { createMcpServer, type McpServices } from './mcp/mcp-tools';
export { MemorySessionStore } from './mcp/memory-session-store';
export { RedisSessionStore } from './mcp/redis-session-store';
export { MCP_SESSION_STORE, type McpSession, type McpSessionStore } from './mcp/mcp-session-store.interface';
export { DEFAULT_MCP_SETTINGS, type McpSettings } from './mcp/mcp-settings';
