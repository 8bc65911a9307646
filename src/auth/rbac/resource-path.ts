/**
 * The resource path RBAC permissions are matched against (DECISIONS.md A8). Pure.
 *
 * `/api/v1/acme/sales/invoices?x=1` with the default slug pattern -> `sales/invoices`.
 */

const API_VERSION_PREFIX = /^\/api\/v\d+\//;
const UNRESERVED_ESCAPE = /%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])/g;

/** Request path without query string or fragment. */
export function requestPathOf(url: string): string {
  let end = url.length;
  const query = url.indexOf('?');
  if (query >= 0) end = query;
  const hash = url.indexOf('#');
  if (hash >= 0 && hash < end) end = hash;
  return end === url.length ? url : url.slice(0, end);
}

/**
 * Same spelling rules as the slug check: escaped unreserved characters decoded and repeated slashes
 * collapsed, so `%61dmin` or `a//b` cannot dodge a literal permission. Returns undefined for `.`/`..`
 * segments, which a permission must never be matched against (they could climb out of a prefix).
 */
function normalize(path: string): string | undefined {
  let normalized = path.includes('%')
    ? path.replace(UNRESERVED_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : path;
  if (normalized.includes('//')) normalized = normalized.replace(/\/{2,}/g, '/');
  if (normalized.includes('.')) {
    for (const segment of normalized.split('/')) {
      if (segment === '.' || segment === '..') return undefined;
    }
  }
  return normalized;
}

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
 * Returns undefined when the path holds dot segments (the caller denies).
 */
export function deriveResourcePath(url: string, slugPattern: RegExp): string | undefined {
  const path = normalize(requestPathOf(url));
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
