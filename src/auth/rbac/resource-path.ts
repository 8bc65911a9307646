import { normalizePath, requestPathOf } from '../request-parts';

/**
 * The resource path RBAC permissions are matched against (docs/decisions.md A8). Pure.
 *
 * `/api/v1/acme/sales/invoices?x=1` with the default slug pattern -> `sales/invoices`.
 */

const API_VERSION_PREFIX = /^\/api\/v\d+\//;

function trimSlashes(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 47) start += 1;
  while (end > start && path.charCodeAt(end - 1) === 47) end -= 1;
  return start === 0 && end === path.length ? path : path.slice(start, end);
}

/**
 * Request path minus the part `slugPattern` matches, without leading or trailing slash.
 * When the pattern does not match: strip `/api/v<digits>/`, else `/api/`, else `/`.
 * Returns undefined for a path normalizePath refuses (dot segments, encoded separators): the caller denies.
 */
export function deriveResourcePath(url: string, slugPattern: RegExp): string | undefined {
  const path = normalizePath(requestPathOf(url));
  if (path === undefined) return undefined;
  // A global or sticky pattern keeps state in lastIndex; reset it so every request starts clean.
  slugPattern.lastIndex = 0;
  const match = slugPattern.exec(path);
  if (match) {
    return trimSlashes(path.slice(0, match.index) + path.slice(match.index + match[0].length));
  }
  const version = API_VERSION_PREFIX.exec(path);
  if (version) return trimSlashes(path.slice(version[0].length));
  if (path.startsWith('/api/')) return trimSlashes(path.slice(5));
  return trimSlashes(path);
}
