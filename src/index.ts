/** The package's public face: what a host application may import. */
export { AuthModule, type AuthModuleAsyncOptions } from './auth/auth.module';
export { AuthOptionsError, resolveAuthOptions } from './auth/auth.options';
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
} from './auth/auth-module-options.interface';
export { AUTH_OPTIONS } from './auth/auth.constants';
export { AuthDeniedException, type DenialCode } from './auth/auth-denial';
export { JwtTenantGuard } from './auth/jwt-tenant.guard';
export { RbacGuard } from './auth/rbac/rbac.guard';
export { RbacService, type RbacHealth, type SetRecordResult } from './auth/rbac/rbac.service';
export type { RbacRecord } from './auth/rbac/rbac-record';
export { SkipAuth, AuthPayload, UserId, TenantId, Subdomain, PathnameSlugs } from './auth/auth.decorators';
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
} from './auth/request-context';
