/** The package's public face: what a host application may import. */
export { AuthModule, type AuthModuleAsyncOptions } from './auth/auth.module';
export { AuthOptionsError, resolveAuthOptions } from './auth/auth.options';
export {
  JWT_ALGORITHMS,
  CACHE_STORE_KINDS,
  type AuthModuleOptions,
  type AuthRequest,
  type CacheStoreKind,
  type CacheStoreOptions,
  type CacheStoreSetting,
  type CustomPayloadValidator,
  type JwtAlgorithm,
  type JwtPayload,
  type PayloadMapping,
  type SkipPath,
} from './auth/auth-module-options.interface';
export { AUTH_OPTIONS } from './auth/auth.constants';
export { AuthDeniedException, type DenialCode } from './auth/auth-denial';
export {
  AUTH_DECISION_CHANNEL,
  PERMISSION_CACHE_CHANNEL,
  type AuthDecisionEvent,
  type AuthGuardName,
  type PermissionCacheEvent,
} from './auth/auth-events';
export { JwtTenantGuard } from './auth/jwt-tenant.guard';
export { RbacGuard } from './auth/rbac/rbac.guard';
export { RbacService, type RbacHealth, type SetRecordResult } from './auth/rbac/rbac.service';
export type { RbacRecord } from './auth/rbac/rbac-record';
export { SkipAuth, AuthPayload, UserId, TenantId, Subdomain, PathnameSlugs } from './auth/auth.decorators';
export {
  AUTH_CONTEXT,
  type AuthContext,
  isAuthenticated,
  getPayload,
  getUserId,
  getTenantId,
  getSubdomain,
  getPathnameSlugs,
  hasPathnameSlugAccess,
  currentUserId,
  currentTenantId,
} from './auth/request-context';

export { AiModule } from './ai/ai.module';
export type { AiModuleOptions } from './ai/ai-module-options.interface';
export {
  AiClient,
  type CallOptions,
  type GenerateOptions,
  type EmbeddingOptions,
  type GenerateResponse,
  type GenerateStreamEvent,
  type EmbeddingResponse,
  type BatchEmbeddingResponse,
  type DeploymentStatus,
} from './ai/client/ai-client';
export {
  SERVICE_REQUEST_EVENT,
  SERVICE_REQUEST_CHANNEL,
  PROVIDER_FALLBACK_CHANNEL,
  type ProviderFallbackEvent,
  type ServiceRequestEvent,
  type ServiceRequestPayload,
} from './ai/client/service-request.events';
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
  NoHealthyDeploymentError,
} from './ai/errors';
export { ApiExceptionFilter } from './http/api-exception.filter';
export { installRequestIdHeader, requestIdAdapterOptions } from './http/request-id';
export {
  SearchService,
  WEB_SEARCH_TOOL,
  type SearchModuleOptions,
  type SearchOptions,
  type SearchAndGenerateOptions,
  type SearchAndGenerateResponse,
} from './ai/tools/search.service';
export type {
  SearchTool,
  SearchResult,
  SearchResponse,
  SearchCallOptions,
  SearchToolSettings,
  SearxngToolSettings,
  SearchApiToolSettings,
  ToolGroupSettings,
} from './ai/tools/search-tool.interface';
export { ToolNotConfiguredError } from './ai/tools/tool-errors';
export { FileDocumentSource } from './ai/documents/file-document-source';
export { MemoryDocumentSource } from './ai/documents/memory-document-source';
export { KeyValueDocumentSource } from './ai/documents/key-value-document-source';
export { DocumentSourceError } from './ai/documents/document-errors';
export type { DocumentBounds, DocumentSource, KeyValueReader } from './ai/documents/document-source.interface';
export { DEFAULT_IMAGE_DOWNLOAD_LIMITS, type ImageDownloadLimits } from './ai/providers/image-downloads';
export { PgVectorStore, type PgVectorStoreOptions } from './ai/vector/pgvector-store';
export { VectorStoreError } from './ai/vector/vector-errors';
export { createVectorStore } from './ai/vector/vector-store.factory';
export {
  VECTOR_METRICS,
  type VectorMetric,
  type VectorRecord,
  type VectorQuery,
  type VectorMatch,
  type VectorStore,
  type VectorBackend,
  type VectorStoreSettings,
} from './ai/vector/vector-store.interface';
export {
  AgentService,
  type AgentRunOptions,
  type AgentResult,
  type AgentActionRecord,
} from './ai/agent/agent.service';
export { AgentToolset, searchAgentTools } from './ai/agent/agent-toolset';
export { JsonlAuditSink } from './ai/agent/jsonl-audit-sink';
export { AgentProtocolError, type AgentProtocolViolation } from './ai/agent/agent-errors';
export { ToolArgumentsError, type ToolFailureCategory } from './ai/agent/tool-failure-category';
export { DEFAULT_AGENT_LIMITS, resolveAgentLimits, type AgentLimits } from './ai/agent/agent-limits';
export { truncateUtf8 } from './ai/agent/utf8-truncate';
export { serializeObservation } from './ai/agent/agent-observation';
export {
  AGENT_EVENT_CHANNEL,
  MAX_TELEMETRY_HOOKS,
  type AgentEventName,
  type AgentTelemetryEvent,
  type AgentTelemetryHook,
} from './ai/agent/agent-telemetry';
export type { AgentTool, AgentToolCall, AgentRunContext, AgentAuthorizer } from './ai/agent/agent-tool.interface';
export type { AgentModuleOptions, AgentContextHook } from './ai/agent/agent-module-options.interface';
export { McpModule } from './ai/mcp/mcp.module';
export { createMcpServer, type McpServices } from './ai/mcp/mcp-tools';
export { MemorySessionStore } from './ai/mcp/memory-session-store';
export { RedisSessionStore } from './ai/mcp/redis-session-store';
export { MCP_SESSION_STORE, type McpSession, type McpSessionStore } from './ai/mcp/mcp-session-store.interface';
export { DEFAULT_MCP_SETTINGS, type McpSettings } from './ai/mcp/mcp-settings';
