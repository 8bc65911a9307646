import type { AuthContext } from '../auth/request-context';
import type { ApiKeyRecord } from './keys/api-key-record';
import { GOVERNANCE_REQUEST_KEY, type GovernanceRequestState } from './governance-identity';

/** The state of every caller of the shared API token: one frozen object, so the hot path allocates nothing. */
export const API_TOKEN_STATE: GovernanceRequestState = Object.freeze({
  identity: Object.freeze({ tenant: null, subTenant: null, subject: 'api-token', subjectKind: 'token' as const, roles: Object.freeze([]) }),
  admin: false,
});

/** The admin token's caller: administers, belongs to no tenant. */
export const ADMIN_TOKEN_STATE: GovernanceRequestState = Object.freeze({
  identity: Object.freeze({ tenant: null, subTenant: null, subject: 'admin-token', subjectKind: 'token' as const, roles: Object.freeze([]) }),
  admin: true,
  operator: true,
});

/** A key's caller also carries the key record, for the limits, budgets and allow-list it sets. */
export interface KeyRequestState extends GovernanceRequestState {
  apiKey: ApiKeyRecord;
}

export function setGovernance(request: object, state: GovernanceRequestState): void {
  (request as Record<string, GovernanceRequestState>)[GOVERNANCE_REQUEST_KEY] = state;
}

/** The key record of a caller that authenticated with an API key, else undefined. */
export function apiKeyOf(state: GovernanceRequestState | undefined): ApiKeyRecord | undefined {
  return (state as Partial<KeyRequestState> | undefined)?.apiKey;
}

/**
 * Frozen: one state serves every request with the key while its lookup is reused, and keys the budget scopes
 * resolved for it (BudgetsService), so no request may change it for the others.
 */
export function stateForKey(record: ApiKeyRecord): KeyRequestState {
  return Object.freeze({
    identity: Object.freeze({
      tenant: record.tenant,
      subTenant: record.subTenant ?? null,
      subject: record.id,
      subjectKind: 'key' as const,
      keyId: record.id,
      roles: Object.freeze([]),
    }),
    admin: false,
    apiKey: Object.freeze({ ...record }),
  });
}

/** The JWT roles that administer governance: an admin role its own tenant's, an operator role every tenant's. */
export interface AdminRoles {
  admin: ReadonlySet<string>;
  operator: ReadonlySet<string>;
}

/**
 * A JWT caller (AuthModule verified the token): tenant and roles from the context; the sub-tenant is the
 * path slug the token grants when it grants exactly one (several slugs bind the caller to none of them). An
 * admin role makes it its tenant's administrator (a token without a tenant administers nothing); an operator
 * role every tenant's.
 */
export function stateForAuthContext(context: AuthContext, roles: AdminRoles): GovernanceRequestState {
  const tenant = context.tenantId === undefined ? null : String(context.tenantId);
  const operator = context.roleIds.some((role) => roles.operator.has(role));
  return {
    identity: {
      tenant,
      subTenant: context.pathnameSlugs.length === 1 ? context.pathnameSlugs[0] : null,
      subject: String(context.userId),
      subjectKind: 'user',
      roles: context.roleIds,
    },
    admin: operator || (tenant !== null && context.roleIds.some((role) => roles.admin.has(role))),
    operator,
  };
}
