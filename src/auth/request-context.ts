import type { JwtPayload } from './auth-module-options.interface';

/** Key under which the auth context is stored on the request (and on its raw Node request). */
export const AUTH_CONTEXT = Symbol.for('tollgate.auth-context');

/**
 * Set (to true) by the JWT/tenant guard when it lets a request through without authentication
 * (skip path, `@SkipAuth()`, CORS preflight), so the RbacGuard passes it too instead of answering 401.
 */
export const AUTH_SKIPPED = Symbol.for('tollgate.auth-skipped');

export interface AuthContext {
  payload: JwtPayload;
  userId: string | number;
  tenantId?: string | number;
  subdomain?: string;
  pathnameSlugs: string[];
  /** Role ids as strings (docs/decisions.md A8 role extraction). */
  roleIds: string[];
}

type RequestLike = object | null | undefined;

export function setAuthContext(request: object, context: AuthContext): void {
  (request as Record<symbol, unknown>)[AUTH_CONTEXT] = context;
  const raw = (request as { raw?: unknown }).raw;
  if (raw && typeof raw === 'object') (raw as Record<symbol, unknown>)[AUTH_CONTEXT] = context;
}

export function getAuthContext(request: RequestLike): AuthContext | undefined {
  if (!request) return undefined;
  return (request as Record<symbol, AuthContext | undefined>)[AUTH_CONTEXT];
}

export const isAuthenticated = (request: RequestLike): boolean => getAuthContext(request) !== undefined;
export const getPayload = (request: RequestLike) => getAuthContext(request)?.payload;
export const getUserId = (request: RequestLike) => getAuthContext(request)?.userId;
export const getTenantId = (request: RequestLike) => getAuthContext(request)?.tenantId;
export const getSubdomain = (request: RequestLike) => getAuthContext(request)?.subdomain;
export const getPathnameSlugs = (request: RequestLike): string[] => getAuthContext(request)?.pathnameSlugs ?? [];

/** Case-insensitive, like the slug check itself (docs/decisions.md A5). */
export function hasPathnameSlugAccess(request: RequestLike, slug: string): boolean {
  const wanted = slug.toLowerCase();
  return getPathnameSlugs(request).some((allowed) => allowed.toLowerCase() === wanted);
}

/** The seed's `current_user_id(request)` / `current_tenant_id(request)`: same values, request-object spelling. */
export const currentUserId = getUserId;
export const currentTenantId = getTenantId;
