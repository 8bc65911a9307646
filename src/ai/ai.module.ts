import { type DynamicModule, Inject, Module, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { V1AgentController } from './agent/agent.controller';
import { AGENT_AUDIT_SINK, AGENT_PROVIDERS } from './agent/agent.providers';
import { AgentService } from './agent/agent.service';
import type { JsonlAuditSink } from './agent/jsonl-audit-sink';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AI_MODULE_OPTIONS } from './ai.constants';
import { AI_DEFAULTS } from './ai.defaults';
import type { AiModuleOptions } from './ai-module-options.interface';
import { AiClient } from './client/ai-client';
import type { AiClientOptions } from './client/ai-client.options';
import { ProviderRegistry } from './client/provider-registry';
import { DEFAULT_DOCUMENT_BOUNDS } from './documents/document-source.interface';
import { DOCUMENT_BOUNDS } from './documents/documents.constants';
import { API_AUTH_OPTIONS, ApiAuthGuard, type ApiAuthOptions } from '../http/api-auth.guard';
import { OpenAiCompatController } from './http/openai/openai-compat.controller';
import { AnthropicController } from './http/anthropic/anthropic.controller';
import { GeminiController } from './http/gemini/gemini.controller';
import { ResponsesController } from './http/responses/responses.controller';
import { PostgresResponseStore } from './http/responses/postgres-response-store';
import { RedisResponseStore } from './http/responses/redis-response-store';
import { MemoryResponseStore, RESPONSE_STORE, type ResponseStore } from './http/responses/responses-store';
import { V1InfoController } from './http/v1-info.controller';
import { V1OperationsController } from './http/v1-operations.controller';
import { V1SearchController } from './http/v1-search.controller';
import { DEFAULT_EXCLUDED_CONTEXT_FIELDS } from './prompts/context-rendering';
import { DEFAULT_PROMPT_TEMPLATES } from './prompts/prompt-templates';
import { SearchService } from './tools/search.service';

export function toClientOptions(options: AiModuleOptions): AiClientOptions {
  const names = options.providers.map((p) => p.name);
  return {
    defaultProvider:
      options.defaultProvider ?? (names.includes(AI_DEFAULTS.defaultProvider) ? AI_DEFAULTS.defaultProvider : (names[0] ?? AI_DEFAULTS.defaultProvider)),
    retry: {
      retries: options.retryAttempts ?? AI_DEFAULTS.retryAttempts,
      baseDelayMs: options.retryDelayMs ?? AI_DEFAULTS.retryDelayMs,
    },
    fallback: { enabled: options.enableFallback ?? AI_DEFAULTS.enableFallback, providers: options.fallbackProviders },
    ...(options.modelAliases ? { modelAliases: options.modelAliases } : {}),
    ...(options.deployments ? { deployments: options.deployments } : {}),
    prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {}, ...options.prompts },
    context: {
      excludedFields: options.excludedContextFields ?? DEFAULT_EXCLUDED_CONTEXT_FIELDS,
      sensitiveKeys: options.sensitiveKeys ?? [],
    },
    sensitiveKeys: options.sensitiveKeys ?? [],
    limits: { maxBatchInputs: options.maxBatchInputs ?? AI_DEFAULTS.maxBatchInputs },
    healthCacheMs: options.healthCacheMs ?? AI_DEFAULTS.healthCacheMs,
  };
}

function createClient(options: AiModuleOptions, events?: EventEmitter2): AiClient {
  return new AiClient(ProviderRegistry.fromSettings(options.providers, options.images), toClientOptions(options), events);
}

function createSearchService(options: AiModuleOptions, client: AiClient): SearchService {
  return SearchService.fromOptions(options.search ?? { tools: [] }, client);
}

function apiAuthOptions(options: AiModuleOptions): ApiAuthOptions {
  const api = options.api ?? {};
  return { mode: api.auth ?? 'token', token: api.token, hook: api.hook };
}

/** Stored responses of /openai/v1/responses: in this process's memory, or in Redis or PostgreSQL for every process on it. */
function createResponseStore(options: AiModuleOptions): ResponseStore {
  const settings = options.responses ?? {};
  const bounds = { retentionMs: settings.retentionMs ?? AI_DEFAULTS.responseRetentionMs, maxStored: settings.maxStored ?? AI_DEFAULTS.maxStoredResponses };
  if (settings.store === 'redis' || settings.store === 'postgres') {
    if (settings.url === undefined) throw new Error(`AiModule: responses.url is required with responses.store ${settings.store}`);
    return settings.store === 'redis'
      ? new RedisResponseStore(settings.url, settings.keyPrefix ?? AI_DEFAULTS.responseKeyPrefix, bounds)
      : new PostgresResponseStore(settings.url, settings.table ?? AI_DEFAULTS.responseTable, bounds);
  }
  return new MemoryResponseStore(bounds);
}

/**
 * The AI gateway: `AiClient`, `SearchService` and `AgentService` for in-process use and the /v1 REST controllers.
 * `service.request` events go to the app's EventEmitter2 when `EventEmitterModule.forRoot()` is imported,
 * and always to the `tollgate:service.request` diagnostics channel.
 */
@Module({})
export class AiModule implements OnApplicationShutdown {
  constructor(
    @Inject(AiClient) private readonly client: AiClient,
    @Inject(SearchService) private readonly search: SearchService,
    @Inject(AGENT_AUDIT_SINK) private readonly auditSink: JsonlAuditSink | null,
  ) {}

  static forRoot(options: AiModuleOptions): DynamicModule {
    const providers: Provider[] = [
      { provide: AI_MODULE_OPTIONS, useValue: options },
      {
        provide: AiClient,
        useFactory: createClient,
        inject: [AI_MODULE_OPTIONS, { token: EventEmitter2, optional: true }],
      },
      { provide: SearchService, useFactory: createSearchService, inject: [AI_MODULE_OPTIONS, AiClient] },
      { provide: DOCUMENT_BOUNDS, useFactory: (options: AiModuleOptions) => options.documents ?? DEFAULT_DOCUMENT_BOUNDS, inject: [AI_MODULE_OPTIONS] },
      { provide: API_AUTH_OPTIONS, useFactory: apiAuthOptions, inject: [AI_MODULE_OPTIONS] },
      { provide: RESPONSE_STORE, useFactory: createResponseStore, inject: [AI_MODULE_OPTIONS] },
      ApiAuthGuard,
      ...AGENT_PROVIDERS,
    ];
    return {
      module: AiModule,
      controllers: [V1InfoController, V1OperationsController, V1SearchController, V1AgentController, OpenAiCompatController, AnthropicController, GeminiController, ResponsesController],
      providers,
      exports: [AiClient, SearchService, AgentService, AI_MODULE_OPTIONS, API_AUTH_OPTIONS],
    };
  }

  /** Releases every provider's and search tool's connection pool; flushes the agent audit log. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.client.close(), this.search.close(), this.auditSink?.close()]);
  }
}

