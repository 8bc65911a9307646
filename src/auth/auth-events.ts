/**
 * What the guards decided, published on `node:diagnostics_channel` channels so a host (Tollgate's metrics,
 * an APM agent) can count decisions without the AuthModule depending on it. With no subscriber a hook costs
 * one `hasSubscribers` read; allowed decisions and cache outcomes publish preallocated frozen messages, so
 * the guarded hot path never allocates for them.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { AuthDeniedException, DenialCode } from './auth-denial';

/** Namespaced as Node recommends for diagnostics channels (they are process-wide). */
export const AUTH_DECISION_CHANNEL = 'tollgate:auth.decision';
export const PERMISSION_CACHE_CHANNEL = 'tollgate:rbac.permission_cache';

export type AuthGuardName = 'jwt' | 'rbac';

export interface AuthDecisionEvent {
  guard: AuthGuardName;
  outcome: 'allowed' | 'denied';
  /** 200 when allowed, else the denial's status. */
  status: 200 | 400 | 401 | 403;
  /** The denial code; `allowed` when the guard let the request through. */
  code: DenialCode | 'allowed';
}

export interface PermissionCacheEvent {
  /** True when a cached grant answered (process memory or the shared store); false when RBAC evaluated the record. */
  hit: boolean;
}

const decisions = diagnosticsChannel.channel(AUTH_DECISION_CHANNEL);
const permissionCache = diagnosticsChannel.channel(PERMISSION_CACHE_CHANNEL);

const ALLOWED: Readonly<Record<AuthGuardName, AuthDecisionEvent>> = {
  jwt: Object.freeze({ guard: 'jwt', outcome: 'allowed', status: 200, code: 'allowed' }),
  rbac: Object.freeze({ guard: 'rbac', outcome: 'allowed', status: 200, code: 'allowed' }),
};
const CACHE_HIT: PermissionCacheEvent = Object.freeze({ hit: true });
const CACHE_MISS: PermissionCacheEvent = Object.freeze({ hit: false });

export function publishAuthAllowed(guard: AuthGuardName): void {
  if (decisions.hasSubscribers) decisions.publish(ALLOWED[guard]);
}

export function publishAuthDenied(guard: AuthGuardName, denial: AuthDeniedException): void {
  if (decisions.hasSubscribers) {
    decisions.publish({ guard, outcome: 'denied', status: denial.getStatus() as 400 | 401 | 403, code: denial.code });
  }
}

export function publishPermissionCache(hit: boolean): void {
  if (permissionCache.hasSubscribers) permissionCache.publish(hit ? CACHE_HIT : CACHE_MISS);
}
