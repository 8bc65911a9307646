import { CACHE_MANAGER } from '@nestjs/cache-manager';
import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import type { ResolvedAuthOptions } from '../auth-module-options.interface';
import { AUTH_OPTIONS, PERMISSIONS_NAMESPACE, RBAC_NAMESPACE } from '../auth.constants';
import { createCacheStore, type CacheStoreHandle } from '../stores/cache-store.factory';

/**
 * Builds the RBAC and permissions stores once from the options and closes them on shutdown.
 * An unset store means the host's CACHE_MANAGER (CacheModule registered with `isGlobal: true`),
 * else process memory.
 */
@Injectable()
export class RbacStores implements OnApplicationShutdown {
  readonly rbac: CacheStoreHandle;
  readonly permissions: CacheStoreHandle;

  constructor(
    @Inject(AUTH_OPTIONS) options: ResolvedAuthOptions,
    @Optional() @Inject(CACHE_MANAGER) hostCache?: Cache,
  ) {
    this.rbac = createCacheStore({
      setting: options.rbacCacheStore,
      options: options.rbacCacheStoreOptions,
      namespace: RBAC_NAMESPACE,
      optionName: 'rbacCacheStore',
      fallback: hostCache,
    });
    try {
      this.permissions = createCacheStore({
        setting: options.permissionsCacheStore,
        options: options.permissionsCacheStoreOptions,
        namespace: PERMISSIONS_NAMESPACE,
        optionName: 'permissionsCacheStore',
        fallback: hostCache,
      });
    } catch (error) {
      void this.rbac.close();
      throw error;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.rbac.close(), this.permissions.close()]);
  }
}
