import { type DynamicModule, Module } from '@nestjs/common';
import { TOLLGATE_CONFIG } from './config.constants';
import type { TollgateConfig } from './config.types';

/** Makes the already-loaded configuration injectable everywhere (`@Inject(TOLLGATE_CONFIG)`). */
@Module({})
export class TollgateConfigModule {
  static forRoot(config: TollgateConfig): DynamicModule {
    return {
      module: TollgateConfigModule,
      global: true,
      providers: [{ provide: TOLLGATE_CONFIG, useValue: config }],
      exports: [TOLLGATE_CONFIG],
    };
  }
}
