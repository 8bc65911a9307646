import { type DynamicModule, Logger, Module, type OnApplicationShutdown, type Type } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { AiModule } from './ai/ai.module';
import { TollgateConfigModule } from './config/config.module';
import { LimitsModule } from './limits/limits.module';
import { GovernanceModule } from './governance/governance.module';
import type { TollgateConfig } from './config/config.types';
import { AiReadiness } from './server/ai-readiness';
import { DescriptorLiveness } from './server/descriptor-liveness';
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
      GovernanceModule.forRoot(
        config.governance,
        { mode: config.ai.api.auth, token: config.ai.api.token },
        { ai, ledger: config.ledger, budgets: config.budgets },
      ),
    ];
    // MCP and the AuthModule are required only when configured: unused, their SDK and store clients cost
    // tens of MB of an idle process (docs/decisions.md C13).
    if (config.mcp.enabled) {
      const { McpModule } = require('./ai/mcp/mcp.module') as typeof import('./ai/mcp/mcp.module');
      imports.push(McpModule.forRoot(config.mcp, ai));
    }
    const controllers: Type[] = [HealthController];
    const providers: Type[] = [ReadinessService, AiReadiness, DescriptorLiveness];
    // The guard is mounted only when an auth: section or JWT_SECRET configures it (docs/decisions.md B3).
    if (config.auth) {
      const { AuthModule } = require('./auth/auth.module') as typeof import('./auth/auth.module');
      const { serverAuthModuleOptions } = require('./config/auth-config.mapper') as typeof import('./config/auth-config.mapper');
      const { AuthContextController } = require('./server/auth-context.controller') as typeof import('./server/auth-context.controller');
      const { AuthReadiness } = require('./server/auth-readiness') as typeof import('./server/auth-readiness');
      imports.push(AuthModule.forRoot(serverAuthModuleOptions(config)));
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
