/**
 * Reading the parts of a request the guards decide on: path, normalised path, host. Pure; shared by the
 * tenant checks, skip paths and RBAC so all three see a request the same way.
 */

const UNRESERVED_ESCAPE = /%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])/g;
/** `%2F` and `%5C`: the router decodes them into the parameter a handler reads, after the checks have run. */
const ENCODED_SEPARATOR = /%(2f|5c)/i;

/** `.` or `..`, alone or before `;` (a router with `useSemicolonDelimiter` cuts the path at the `;`). */
function isDotSegment(segment: string): boolean {
  const end = segment.indexOf(';');
  const name = end < 0 ? segment : segment.slice(0, end);
  return name === '.' || name === '..';
}

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
 * Escaped unreserved characters decoded and repeated slashes collapsed, so `%61cme` or `a//b` cannot
 * dodge a check. Returns undefined when the checks and the handler could see different segments: a
 * `.`/`..` segment (plain, escaped or before `;`), an encoded separator (`%2F`, `%5C`) or a backslash.
 * Fastify's router decodes `files/public/..%2Fsecret` into the wildcard `public/../secret`, which a check
 * splitting on the raw `/` would grant under `files/public/*`. Double encoding (`%252F`) is decoded once by
 * the router (the handler reads `%2F`), so it is left alone.
 */
export function normalizePath(path: string): string | undefined {
  // An absolute-form target (`GET http://x/api/v1/south/…`) is routed by find-my-way on the path after the
  // authority, which a check anchored at `/` would not see.
  if (path.charCodeAt(0) !== 47 || path.includes('\\')) return undefined;
  let normalized = path;
  if (path.includes('%')) {
    if (ENCODED_SEPARATOR.test(path)) return undefined;
    normalized = path.replace(UNRESERVED_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  if (normalized.includes('//')) normalized = normalized.replace(/\/{2,}/g, '/');
  if (normalized.includes('.')) {
    for (const segment of normalized.split('/')) {
      if (isDotSegment(segment)) return undefined;
    }
  }
  return normalized;
}

/** First value of a header that may repeat or hold a comma-separated list (X-Forwarded-Host). */
export function firstHeaderValue(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (!first) return undefined;
  const comma = first.indexOf(',');
  return (comma < 0 ? first : first.slice(0, comma)).trim() || undefined;
}

/**
 * The host the client asked for, lower-cased, port kept: `Host`, or the first `X-Forwarded-Host` only
 * when the deployment trusts its proxy (a client can send that header itself).
 */
export function requestHost(headers: Record<string, string | string[] | undefined>, trustProxy: boolean): string {
  const forwarded = trustProxy ? firstHeaderValue(headers['x-forwarded-host']) : undefined;
  return (forwarded ?? firstHeaderValue(headers.host) ?? '').toLowerCase();
}
