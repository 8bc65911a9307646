import { type DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppModule } from '../app.module';
import type { TollgateConfig } from '../config/config.types';
import { loggerParams, type LogOutput } from '../observability/logging';
import { MetricsModule } from '../observability/metrics.module';
import type { MetricsSettings } from '../observability/metrics-settings';

/**
 * The HTTP server's root: the application plus what only a served process needs (JSON request logs,
 * /metrics). The CLI builds AppModule's parts without these, so its stdout stays clean.
 */
@Module({})
export class HttpRootModule {
  static forRoot(config: TollgateConfig, metrics: MetricsSettings, logs: LogOutput): DynamicModule {
    return {
      module: HttpRootModule,
      imports: [
        LoggerModule.forRoot(loggerParams(logs)),
        AppModule.forRoot(config),
        ...(metrics.enabled ? [MetricsModule.forRoot(metrics)] : []),
      ],
    };
  }
}
