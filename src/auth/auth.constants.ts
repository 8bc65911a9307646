/** Injection token of the resolved AuthModule options. */
export const AUTH_OPTIONS = Symbol('tollgate:auth-options');
/** Injection tokens of the two cache stores (cache-manager `Cache` instances). */
export const RBAC_STORE = Symbol('tollgate:rbac-store');
export const PERMISSIONS_STORE = Symbol('tollgate:permissions-store');
/** Metadata key set by `@SkipAuth()`. */
export const SKIP_AUTH_KEY = 'tollgate:skip-auth';
/** Namespace prefixes, so the permission cache can be cleared without touching other keys. */
export const RBAC_NAMESPACE = 'tollgate:rbac';
export const PERMISSIONS_NAMESPACE = 'tollgate:perm';
/** Seed 2.1: the first capture group is the sub-tenant slug. */
export const DEFAULT_PATHNAME_SLUG_PATTERN = '^/api/v1/([^/]+)/';
/**
 * RBAC's defaults, here rather than beside RbacService so that resolving the options (which every server does,
 * auth or not) does not load the service's regex engine and cache stores.
 */
export const DEFAULT_RBAC_RECORD_KEY = 'permissions';
export const DEFAULT_RBAC_RECORD_REFRESH_MS = 1000;
export const DEFAULT_CACHED_PERMISSIONS_TTL = 1800;
