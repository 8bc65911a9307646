/**
 * What an administrator may administer (docs/decisions.md D3): an operator (the admin token, a JWT holding an
 * operator role) every tenant; a JWT holding an admin role only the tenant its token names.
 */
import { isSubjectOfTenant, WILDCARD_ID } from './budgets/budget-rules';
import type { ScopeKind } from './budgets/budget-scope';
import { AdminRequiredError } from './governance-errors';
import type { GovernanceRequestState } from './governance-identity';

/** The one tenant an administrator is confined to; undefined for an operator, who administers every tenant. */
export function administeredTenant(state: GovernanceRequestState | undefined): string | undefined {
  if (!state?.admin) throw new AdminRequiredError();
  if (state.operator) return undefined;
  // stateForAuthContext makes no tenant-less JWT an admin; a state without a tenant administers none.
  return state.identity.tenant ?? '';
}

/** 403 when an administrator of one tenant names another; `field` is what named it (`tenant`, `id`). */
export function assertAdministers(state: GovernanceRequestState | undefined, tenant: string, field: string): void {
  const own = administeredTenant(state);
  if (own !== undefined && tenant !== own) throw otherTenant(own, field);
}

/**
 * Whether a budget rule of `scope` and `id` binds callers of `tenant` only: the tenant itself, one of its
 * sub-tenants, one of its users. A `*` rule binds every tenant, and a `key` rule's tenant is the key's (set a
 * key's limits through /v1/admin/keys, which checks it).
 */
export function ruleWithinTenant(scope: ScopeKind, id: string, tenant: string): boolean {
  if (id === WILDCARD_ID) return false;
  if (scope === 'tenant') return id === tenant;
  if (scope === 'sub_tenant') return id.startsWith(`${tenant}/`);
  if (scope === 'subject') return isSubjectOfTenant(id, tenant);
  return false;
}

/**
 * 403 unless an operator sets or deletes the rule. A run-time rule for an exact id outranks the configured ones,
 * so a tenant's own administrator writing rules could lift the ceiling the operator set for that tenant, its
 * sub-tenants or its users; it reads its tenant's rules and sets its keys' limits instead (D3).
 */
export function assertAdministersRule(state: GovernanceRequestState | undefined, scope: ScopeKind, id: string): void {
  const own = administeredTenant(state);
  if (own !== undefined) {
    throw new AdminRequiredError(
      `scope: budgets and limits (here ${scope} ${id}) are set by an operator (an operator role or the admin token); an administrator of tenant ${own} reads its tenant's rules and sets the limits of its keys.`,
    );
  }
}

function otherTenant(own: string, field: string): AdminRequiredError {
  return new AdminRequiredError(`${field}: an administrator of tenant ${own} administers that tenant only; other tenants need an operator role or the admin token.`);
}
