import { type DynamicModule, Inject, Module, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { AiClient } from '../ai/client/ai-client';
import { API_AUTH_OPTIONS, API_CALLER_RESOLVER, ApiAuthGuard, type ApiAuthOptions } from '../http/api-auth.guard';
import { ModelAllowList } from './allow-lists/model-allow-list';
import { BudgetsModule } from './budgets/budgets.module';
import { BudgetsService } from './budgets/budgets.service';
import type { BudgetsSettings } from './budgets/budgets-settings';
import { GovernanceGate } from './governance-gate';
import { GovernanceAdminGuard } from './governance-admin.guard';
import { GovernanceCallers } from './governance-callers';
import { GOVERNANCE_SETTINGS, type GovernanceSettings } from './governance-settings';
import { AdminKeysController } from './keys/admin-keys.controller';
import { ApiKeyAuthenticator } from './keys/api-key-authenticator';
import type { KeyStore } from './keys/key-store';
import { createKeyStore } from './keys/key-store.factory';
import { KEY_STORE, KeysService } from './keys/keys.service';
import { LedgerModule } from './ledger/ledger.module';
import type { LedgerSettings } from './ledger/ledger-settings';

/** The parts of governance that need the gateway: the ledger records its calls, budgets gate them. */
export interface GovernanceParts {
  /** The AiModule whose AiClient is governed. */
  ai: DynamicModule;
  ledger: LedgerSettings;
  budgets: BudgetsSettings;
}

/**
 * Identity-bound governance (docs/governance.md). Global: the /v1 and MCP auth layers find its
 * ApiCallerResolver (API keys, admin token, JWT callers) wherever they are. `apiAuth` is the /v1 API's
 * auth setting, for the admin routes' own ApiAuthGuard. With `parts`, it also records the AiClient's calls
 * in the ledger and gates them by allow-lists and budgets, for the call context the server's request hook
 * (installCallContextHook) gives each request.
 */
@Module({})
export class GovernanceModule implements OnApplicationShutdown {
  constructor(
    @Inject(KEY_STORE) private readonly store: KeyStore,
    @Optional() @Inject(AiClient) client?: AiClient,
    @Optional() @Inject(GovernanceGate) gate?: GovernanceGate,
  ) {
    if (client && gate) client.setModelCallGate(gate);
  }

  static forRoot(settings: GovernanceSettings, apiAuth: ApiAuthOptions, parts?: GovernanceParts): DynamicModule {
    const governed: Pick<DynamicModule, 'imports' | 'providers'> = parts
      ? {
          imports: [parts.ai, LedgerModule.forRoot(parts.ledger, parts.ai), BudgetsModule.forRoot(parts.budgets)],
          providers: [
            {
              provide: GovernanceGate,
              useFactory: (allowList: ModelAllowList, budgets: BudgetsService) => new GovernanceGate(allowList, parts.ledger.pricing, budgets, { allowUnpriced: parts.ledger.allowUnpriced }),
              inject: [ModelAllowList, BudgetsService],
            },
          ],
        }
      : { imports: [], providers: [] };
    return {
      module: GovernanceModule,
      global: true,
      imports: governed.imports,
      controllers: [AdminKeysController],
      providers: [
        ...(governed.providers ?? []),
        { provide: GOVERNANCE_SETTINGS, useValue: settings },
        { provide: KEY_STORE, useFactory: () => createKeyStore(settings.keys) },
        { provide: ApiKeyAuthenticator, useFactory: (store: KeyStore) => new ApiKeyAuthenticator(store), inject: [KEY_STORE] },
        { provide: KeysService, useFactory: (store: KeyStore, authenticator: ApiKeyAuthenticator) => new KeysService(store, authenticator), inject: [KEY_STORE, ApiKeyAuthenticator] },
        GovernanceCallers,
        { provide: API_CALLER_RESOLVER, useExisting: GovernanceCallers },
        ModelAllowList,
        { provide: API_AUTH_OPTIONS, useValue: apiAuth },
        ApiAuthGuard,
        GovernanceAdminGuard,
      ],
      exports: [GOVERNANCE_SETTINGS, KEY_STORE, API_CALLER_RESOLVER, API_AUTH_OPTIONS, ModelAllowList, KeysService],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
