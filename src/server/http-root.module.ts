import { type DynamicModule, Module } from '@nestjs/common';
import { AppModule } from '../app.module';
import type { TollgateConfig } from '../config/config.types';
import { MetricsModule } from '../observability/metrics.module';
import type { MetricsSettings } from '../observability/metrics-settings';

/**
 * The HTTP server's root: the application plus what only a served process needs (/metrics; the JSON
 * logs are set up by createHttpApp). The CLI builds AppModule's parts without these, so its stdout stays clean.
 */
@Module({})
export class HttpRootModule {
  static forRoot(config: TollgateConfig, metrics: MetricsSettings): DynamicModule {
    return {
      module: HttpRootModule,
      imports: [
        AppModule.forRoot(config),
        ...(metrics.enabled ? [MetricsModule.forRoot(metrics)] : []),
      ],
    };
  }
}
