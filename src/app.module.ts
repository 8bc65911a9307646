import { type DynamicModule, Logger, Module, type OnApplicationShutdown, type Type } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { requireAuthModuleOptions } from './config/auth-config.mapper';
import { TollgateConfigModule } from './config/config.module';
import type { TollgateConfig } from './config/config.types';
import { AuthContextController } from './server/auth-context.controller';
import { AuthReadiness } from './server/auth-readiness';
import { HealthController } from './server/health.controller';
import { ReadinessService } from './server/readiness.service';

/** The Tollgate server, wired from one loaded configuration (see src/config). */
@Module({})
export class AppModule implements OnApplicationShutdown {
  static forRoot(config: TollgateConfig): DynamicModule {
    const imports: DynamicModule[] = [TollgateConfigModule.forRoot(config)];
    const controllers: Type[] = [HealthController];
    const providers: Type[] = [ReadinessService];
    // The guard is mounted only when an auth: section or JWT_SECRET configures it (DECISIONS.md B3).
    if (config.auth) {
      imports.push(AuthModule.forRoot(requireAuthModuleOptions(config)));
      controllers.push(AuthContextController);
      if (config.auth.rbacEnabled) providers.push(AuthReadiness);
    }
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
