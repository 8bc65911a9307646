/** `tollgate/auth`: the AuthModule alone, for a host app that needs no gateway (loads nothing of ai/ or governance/). */
export { AuthModule, type AuthModuleAsyncOptions } from './auth.module';
export { AuthOptionsError, resolveAuthOptions } from './auth.options';
export {
  JWT_ALGORITHMS,
  CACHE_STORE_KINDS,
  type AuthModuleOptions,
  type AuthRequest,
  type CacheStoreKind,
  type CacheStoreOptions,
  type CacheStoreSetting,
  type CustomPayloadValidator,
  type JwtAlgorithm,
  type JwtPayload,
  type PayloadMapping,
  type SkipPath,
} from './auth-module-options.interface';
export { AUTH_OPTIONS } from './auth.constants';
export { AuthDeniedException, type DenialCode } from './auth-denial';
export {
  AUTH_DECISION_CHANNEL,
  PERMISSION_CACHE_CHANNEL,
  type AuthDecisionEvent,
  type AuthGuardName,
  type PermissionCacheEvent,
} from './auth-events';
export { JwtTenantGuard } from './jwt-tenant.guard';
export { RbacGuard } from './rbac/rbac.guard';
export { RbacService, type RbacHealth, type SetRecordResult } from './rbac/rbac.service';
export type { RbacRecord } from './rbac/rbac-record';
export { SkipAuth, AuthPayload, UserId, TenantId, Subdomain, PathnameSlugs } from './auth.decorators';
export {
  AUTH_CONTEXT,
  type AuthContext,
  isAuthenticated,
  getPayload,
  getUserId,
  getTenantId,
  getSubdomain,
  getPathnameSlugs,
  hasPathnameSlugAccess,
  currentUserId,
  currentTenantId,
} from './request-context';
