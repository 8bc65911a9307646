import { type DynamicModule, Logger, Module, type OnApplicationShutdown, type Type } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { AiModule } from './ai/ai.module';
import { McpModule } from './ai/mcp/mcp.module';
import type { AuthModuleOptions } from './auth/auth-module-options.interface';
import { AuthModule } from './auth/auth.module';
import { requireAuthModuleOptions } from './config/auth-config.mapper';
import { TollgateConfigModule } from './config/config.module';
import { LimitsModule } from './limits/limits.module';
import type { TollgateConfig } from './config/config.types';
import { AiReadiness } from './server/ai-readiness';
import { AuthContextController } from './server/auth-context.controller';
import { AuthReadiness } from './server/auth-readiness';
import { HealthController } from './server/health.controller';
import { ReadinessService } from './server/readiness.service';

/** The Tollgate server, wired from one loaded configuration (see src/config). */
@Module({})
export class AppModule implements OnApplicationShutdown {
  static forRoot(config: TollgateConfig): DynamicModule {
    const ai = AiModule.forRoot(config.ai);
    const imports: DynamicModule[] = [
      TollgateConfigModule.forRoot(config),
      EventEmitterModule.forRoot(),
      ai,
    ];
    if (config.mcp.enabled) imports.push(McpModule.forRoot(config.mcp, ai));
    const controllers: Type[] = [HealthController];
    const providers: Type[] = [ReadinessService, AiReadiness];
    // The guard is mounted only when an auth: section or JWT_SECRET configures it (docs/decisions.md B3).
    if (config.auth) {
      imports.push(AuthModule.forRoot(withApiAuthExemption(requireAuthModuleOptions(config), config)));
      controllers.push(AuthContextController);
      if (config.auth.rbacEnabled) providers.push(AuthReadiness);
    }
    // After AuthModule: its guards run first, so the tenant limit counts authenticated requests only.
    if (config.limits.enabled) imports.push(LimitsModule.forRoot(config.limits));
    return {
      module: AppModule,
      imports,
      controllers,
      providers,
      exports: [ReadinessService],
    };
  }

  /** Runs after every module closed (stores disconnected), so the line confirms a clean stop. */
  onApplicationShutdown(signal?: string): void {
    new Logger('Tollgate').log(`stopped${signal ? ` (${signal})` : ''}`);
  }
}

/**
 * Unless `api.auth: jwt`, the /v1 API and its OpenAI-compatible twin answer to their own auth hook (token or
 * none), so the JWT guard steps aside for them (docs/decisions.md B3).
 */
function withApiAuthExemption(options: AuthModuleOptions, config: TollgateConfig): AuthModuleOptions {
  const skipPaths = [...(options.skipPaths ?? [])];
  if (config.ai.api.auth !== 'jwt') skipPaths.push(`${config.server.basePath}/v1/*`, `${config.server.basePath}/openai/v1/*`);
  // Likewise the MCP endpoint answers to its own bearer token unless `mcp.auth: jwt`.
  if (config.mcp.enabled && config.mcp.auth !== 'jwt') skipPaths.push(`${config.server.basePath}${config.mcp.path}`);
  return { ...options, skipPaths };
}
