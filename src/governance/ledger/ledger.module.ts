import { type DynamicModule, Inject, Module, Optional } from '@nestjs/common';
import { AiClient } from '../../ai/client/ai-client';
import type { LedgerSettings } from './ledger-settings';
import { createLedgerStore, LedgerService } from './ledger.service';
import { UsageController } from './usage.controller';

/**
 * The usage and cost ledger: records every model call of the AiClient it finds (the AiModule passed to
 * forRoot) and serves GET /v1/usage. With `enabled: false` it records nothing and serves nothing.
 */
@Module({})
export class LedgerModule {
  constructor(@Optional() @Inject(AiClient) client: AiClient | undefined, @Optional() @Inject(LedgerService) ledger: LedgerService | undefined) {
    if (client && ledger) client.setModelCallSink(ledger.record);
  }

  static forRoot(settings: LedgerSettings, ai?: DynamicModule): DynamicModule {
    if (!settings.enabled) return { module: LedgerModule };
    return {
      module: LedgerModule,
      imports: ai ? [ai] : [],
      controllers: [UsageController],
      providers: [
        {
          provide: LedgerService,
          // The client's configuration names the models whose metric labels are kept (model-labels.ts).
          useFactory: (client?: AiClient) =>
            new LedgerService(settings, createLedgerStore(settings), Date.now, client ? (provider, model) => client.servesModel(provider, model) : undefined),
          inject: [{ token: AiClient, optional: true }],
        },
      ],
      exports: [LedgerService],
    };
  }
}
