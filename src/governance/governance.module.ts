import { type DynamicModule, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { API_AUTH_OPTIONS, API_CALLER_RESOLVER, ApiAuthGuard, type ApiAuthOptions } from '../http/api-auth.guard';
import { ModelAllowList } from './allow-lists/model-allow-list';
import { GovernanceAdminGuard } from './governance-admin.guard';
import { GovernanceCallers } from './governance-callers';
import { GOVERNANCE_SETTINGS, type GovernanceSettings } from './governance-settings';
import { AdminKeysController } from './keys/admin-keys.controller';
import { ApiKeyAuthenticator } from './keys/api-key-authenticator';
import type { KeyStore } from './keys/key-store';
import { createKeyStore } from './keys/key-store.factory';
import { KEY_STORE, KeysService } from './keys/keys.service';

/**
 * Identity-bound governance (docs/governance.md). Global: the /v1 and MCP auth layers find its
 * ApiCallerResolver (API keys, admin token, JWT callers) wherever they are. `apiAuth` is the /v1 API's
 * auth setting, for the admin routes' own ApiAuthGuard.
 */
@Module({})
export class GovernanceModule implements OnApplicationShutdown {
  constructor(@Inject(KEY_STORE) private readonly store: KeyStore) {}

  static forRoot(settings: GovernanceSettings, apiAuth: ApiAuthOptions): DynamicModule {
    return {
      module: GovernanceModule,
      global: true,
      controllers: [AdminKeysController],
      providers: [
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
      exports: [GOVERNANCE_SETTINGS, KEY_STORE, API_CALLER_RESOLVER, ModelAllowList, KeysService],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
