/**
 * Verified JWT payload -> request context, through the payload mapping (docs/decisions.md A2,
 * A7, A8). Pure. Structure failures are 401 `invalid_claims`.
 */
import type { JwtPayload, PayloadMapping } from './auth-module-options.interface';
import type { AuthContext } from './request-context';

/** Claims tried, in order, when the mapped role claim is absent (docs/decisions.md A8). */
export const FALLBACK_ROLE_CLAIMS = ['roles', 'role', 'user_roles', 'role_ids'] as const;

export interface ClaimRequirements {
  tenantId: boolean;
  subdomain: boolean;
  pathnameSlugs: boolean;
}

export type ClaimsResult = { ok: true; context: AuthContext } | { ok: false; detail: string };

/** Empty string and null count as missing. */
function present(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

function isId(value: unknown): value is string | number {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** Array of strings/integers, or one of them -> strings; undefined when the shape is wrong. */
export function normalizeRoles(value: unknown): string[] | undefined {
  const list = Array.isArray(value) ? value : [value];
  const roles: string[] = [];
  for (const role of list) {
    if (typeof role === 'string' && role !== '') roles.push(role);
    else if (typeof role === 'number' && Number.isInteger(role)) roles.push(String(role));
    else return undefined;
  }
  return roles;
}

/** The mapped role claim, else the first present fallback claim. */
export function roleClaim(payload: JwtPayload, mappedName: string): { name: string; value: unknown } | undefined {
  if (present(payload[mappedName])) return { name: mappedName, value: payload[mappedName] };
  for (const name of FALLBACK_ROLE_CLAIMS) {
    if (present(payload[name])) return { name, value: payload[name] };
  }
  return undefined;
}

export function extractClaims(payload: JwtPayload, mapping: PayloadMapping, required: ClaimRequirements): ClaimsResult {
  const userId = payload[mapping.userId];
  if (!present(userId)) return { ok: false, detail: `the token has no "${mapping.userId}" claim` };
  if (!isId(userId)) return { ok: false, detail: `the "${mapping.userId}" claim must be a string or a number` };

  const tenantId = payload[mapping.tenantId];
  if (present(tenantId) && !isId(tenantId)) {
    return { ok: false, detail: `the "${mapping.tenantId}" claim must be a string or a number` };
  }
  if (required.tenantId && !present(tenantId)) return { ok: false, detail: `the token has no "${mapping.tenantId}" claim` };

  const subdomain = payload[mapping.subdomain];
  if (present(subdomain) && typeof subdomain !== 'string') {
    return { ok: false, detail: `the "${mapping.subdomain}" claim must be a string` };
  }
  if (required.subdomain && !present(subdomain)) return { ok: false, detail: `the token has no "${mapping.subdomain}" claim` };

  const slugsClaim = payload[mapping.pathnameSlugs];
  let pathnameSlugs: string[] = [];
  if (present(slugsClaim)) {
    const list = Array.isArray(slugsClaim) ? slugsClaim : [slugsClaim];
    if (!list.every((slug) => typeof slug === 'string')) {
      return { ok: false, detail: `the "${mapping.pathnameSlugs}" claim must be a string or an array of strings` };
    }
    pathnameSlugs = list as string[];
  } else if (required.pathnameSlugs) {
    return { ok: false, detail: `the token has no "${mapping.pathnameSlugs}" claim` };
  }

  const roles = roleClaim(payload, mapping.roleIds);
  const roleIds = roles ? normalizeRoles(roles.value) : [];
  if (!roleIds) return { ok: false, detail: `the "${roles!.name}" claim must be a string, an integer or an array of them` };

  return {
    ok: true,
    context: {
      payload,
      userId,
      tenantId: present(tenantId) ? (tenantId as string | number) : undefined,
      subdomain: present(subdomain) ? (subdomain as string) : undefined,
      pathnameSlugs,
      roleIds,
    },
  };
}
