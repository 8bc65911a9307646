import { type DynamicModule, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { MCP_SETTINGS, mcpControllerFor } from './mcp-http.controller';
import { MCP_SESSION_STORE, type McpSessionStore } from './mcp-session-store.interface';
import type { McpSettings } from './mcp-settings';
import { MemorySessionStore } from './memory-session-store';

export function createSessionStore(settings: McpSettings): McpSessionStore {
  const store = settings.sessionStore;
  if (store.kind !== 'redis') return new MemorySessionStore();
  // Required here: memory sessions load no Redis client (docs/decisions.md C13).
  const { RedisSessionStore } = require('./redis-session-store') as typeof import('./redis-session-store');
  return new RedisSessionStore(store.url, store.keyPrefix);
}

/**
 * MCP over Streamable HTTP at `settings.path`, on the services of the given AiModule (the same
 * DynamicModule object the app imports, so both share one AiClient).
 */
@Module({})
export class McpModule implements OnApplicationShutdown {
  constructor(@Inject(MCP_SESSION_STORE) private readonly sessions: McpSessionStore) {}

  static forRoot(settings: McpSettings, ai: DynamicModule, sessions?: McpSessionStore): DynamicModule {
    return {
      module: McpModule,
      imports: [ai],
      controllers: [mcpControllerFor(settings.path)],
      providers: [
        { provide: MCP_SETTINGS, useValue: settings },
        { provide: MCP_SESSION_STORE, useFactory: () => sessions ?? createSessionStore(settings) },
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sessions.close();
  }
}
