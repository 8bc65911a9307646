import { type DynamicModule, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';
import { METRICS_SETTINGS, type MetricsSettings } from './metrics-settings';

/** GET /metrics and the registry behind it; absent entirely when `metrics.enabled` is false. */
@Module({})
export class MetricsModule {
  static forRoot(settings: MetricsSettings): DynamicModule {
    return {
      module: MetricsModule,
      controllers: [MetricsController],
      providers: [{ provide: METRICS_SETTINGS, useValue: settings }, MetricsService],
      exports: [MetricsService],
    };
  }
}
