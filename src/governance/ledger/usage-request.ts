/**
 * GET /v1/usage's parameters to a {@link UsageQuery}: dates and grouping checked (400 naming the
 * parameter), and the tenant scope from the caller's governance identity (403 when it asks beyond it).
 */
import type { GovernanceRequestState } from '../governance-identity';
import { checkRange, parseGroup, parseInstant, type UsageQuery, UsageQueryError } from './usage-query';

export interface UsageParams {
  from?: string;
  to?: string;
  group_by?: string;
  tenant?: string;
}

/** The default range when `from` is omitted: the last seven days up to `to`. */
export const DEFAULT_USAGE_RANGE_MS = 7 * 86_400_000;

export class UsageScopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageScopeError';
  }
}

export function usageQueryFor(params: UsageParams, state: GovernanceRequestState | undefined, now: number): UsageQuery {
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && typeof value !== 'string') throw new UsageQueryError(name, `${name} must be given once`);
  }
  const to = params.to !== undefined ? parseInstant(params.to, 'to') : now;
  const from = params.from !== undefined ? parseInstant(params.from, 'from') : to - DEFAULT_USAGE_RANGE_MS;
  checkRange(from, to, { from: 'from', to: 'to' });
  const groupBy = parseGroup(params.group_by, 'group_by');
  if (params.tenant !== undefined && params.tenant.trim() === '') throw new UsageQueryError('tenant', 'tenant must not be empty');
  return { from, to, groupBy, ...tenantScope(params.tenant, state) };
}

/**
 * An operator (the admin token, an operator role) sees every tenant (or the one it names); anyone else, a
 * tenant's administrator included, sees exactly its own tenant.
 */
function tenantScope(requested: string | undefined, state: GovernanceRequestState | undefined): { tenant?: string } {
  if (!state) throw new UsageScopeError('usage reports need an authenticated caller with a governance identity');
  if (state.operator) return requested !== undefined ? { tenant: requested } : {};
  const own = state.identity.tenant;
  if (own === null) throw new UsageScopeError('usage reports are per tenant, and this caller has no tenant; ask with the admin token or an operator role');
  if (requested !== undefined && requested !== own) throw new UsageScopeError('tenant: a caller may only see its own tenant');
  return { tenant: own };
}
