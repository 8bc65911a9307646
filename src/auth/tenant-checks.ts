/**
 * The two-level tenant checks (docs/decisions.md A5) as pure functions. Each returns
 * undefined when the request passes, or the denial code and the human reason (logged, never sent
 * outside debug mode: it may name claim values).
 */
import type { DenialCode } from './auth-denial';

export interface TenantCheckFailure {
  code: DenialCode;
  detail: string;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/** `acme.example.com:8443` -> `acme`; hosts of fewer than three labels, IPs and `localhost` have none. */
export function subdomainOf(host: string): string | undefined {
  if (host.startsWith('[')) return undefined;
  const colon = host.lastIndexOf(':');
  let name = (colon >= 0 ? host.slice(0, colon) : host).toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (isDigit(name.charCodeAt(name.length - 1)) && IPV4.test(name)) return undefined;
  const firstDot = name.indexOf('.');
  if (firstDot <= 0 || name.indexOf('.', firstDot + 1) < 0) return undefined;
  return name.slice(0, firstDot);
}

export function checkSubdomain(claim: string | undefined, host: string): TenantCheckFailure | undefined {
  const actual = subdomainOf(host);
  if (actual === undefined) return { code: 'subdomain_mismatch', detail: `the host "${host}" has no subdomain` };
  if (claim === undefined || claim.toLowerCase() !== actual) {
    return { code: 'subdomain_mismatch', detail: `subdomain "${actual}" does not match the token's subdomain claim` };
  }
  return undefined;
}

/** The slug the pattern's first capture group finds in a path already normalised by normalizePath. */
export function slugOf(path: string, pattern: RegExp): string | undefined {
  // A global or sticky pattern keeps state in lastIndex; every request starts clean.
  pattern.lastIndex = 0;
  const match = pattern.exec(path);
  return match?.[1] || undefined;
}

/**
 * A path the pattern does not match has no slug and passes (docs/decisions.md A5). `path` is normalised: the guard
 * has already refused a path normalizePath rejects. `allowedLowerCase` holds the token's slugs lower-cased:
 * the guard builds that set once per verified token, not once per request.
 */
export function checkPathnameSlug(allowedLowerCase: ReadonlySet<string>, path: string, pattern: RegExp): TenantCheckFailure | undefined {
  const slug = slugOf(path, pattern);
  if (slug === undefined) return undefined;
  if (allowedLowerCase.has(slug.toLowerCase())) return undefined;
  return { code: 'slug_denied', detail: `slug "${slug}" is not among the token's pathname_slugs` };
}

export function checkTenantHeader(
  claim: string | number | undefined,
  header: string | string[] | undefined,
  headerName: string,
): TenantCheckFailure | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return { code: 'tenant_mismatch', detail: `the ${headerName} header is missing` };
  if (claim === undefined || String(claim) !== value) {
    return { code: 'tenant_mismatch', detail: `the ${headerName} header does not match the token's tenant claim` };
  }
  return undefined;
}
