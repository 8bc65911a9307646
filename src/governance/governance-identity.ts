/**
 * Who a model call is made for, as governance (keys, ledger, budgets, limits, allow-lists) sees it: the
 * verified identity every request already carries, from a JWT's claims, an API key or the shared API token;
 * `local` is the operating-system account running one of the CLI's AI commands.
 */
export type SubjectKind = 'user' | 'key' | 'token' | 'local';

export interface GovernanceIdentity {
  /** Top-level tenant; null for the shared API token without a tenant. */
  tenant: string | null;
  /** Sub-tenant slug, when the caller is bound to one. */
  subTenant: string | null;
  /** The user id (JWT `sub`), the key id, `api-token` for the shared token, or `local:<account>` for the CLI. */
  subject: string;
  subjectKind: SubjectKind;
  /** Set when the caller authenticated with an API key. */
  keyId?: string;
  /** JWT roles; empty for keys and the shared token. */
  roles: readonly string[];
}

/** What the API auth layer attaches to a request it authenticated: the identity and what it may administer. */
export interface GovernanceRequestState {
  identity: GovernanceIdentity;
  /**
   * May administer governance: the admin token, a JWT holding an operator role, or a JWT of a tenant holding an
   * admin role. Unless `operator` is set too, only its own tenant's keys and usage (its budget rules read-only) (docs/decisions.md D3).
   */
  admin: boolean;
  /** Administers every tenant: the admin token, or a JWT holding one of `governance.operator_roles`. */
  operator?: boolean;
}

/** The request property (on Fastify's request) that holds {@link GovernanceRequestState}. */
export const GOVERNANCE_REQUEST_KEY = 'tollgateGovernance';

export function governanceOf(request: object): GovernanceRequestState | undefined {
  return (request as Record<string, GovernanceRequestState | undefined>)[GOVERNANCE_REQUEST_KEY];
}
