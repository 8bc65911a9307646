import type { Provider } from '@nestjs/common';
import { PERMISSIONS_STORE, RBAC_STORE } from '../auth.constants';
import { RbacStores } from './rbac-stores.provider';
import { RbacGuard } from './rbac.guard';
import { RbacService } from './rbac.service';

/** Everything AuthModule needs for RBAC; it registers RbacGuard as the second APP_GUARD. */
export const rbacProviders: Provider[] = [
  RbacStores,
  { provide: RBAC_STORE, useFactory: (stores: RbacStores) => stores.rbac.cache, inject: [RbacStores] },
  { provide: PERMISSIONS_STORE, useFactory: (stores: RbacStores) => stores.permissions.cache, inject: [RbacStores] },
  RbacService,
  RbacGuard,
];
