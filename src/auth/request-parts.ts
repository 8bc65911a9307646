/**
 * Reading the parts of a request the guards decide on: path, normalised path, host. Pure; shared by the
 * tenant checks, skip paths and RBAC so all three see a request the same way.
 */

const ESCAPE = /%([0-9a-fA-F]{2})/g;
/** RFC 3986 unreserved characters: their escaped and plain forms are the same path. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** Characters a path carries escaped: everything outside RFC 3986's pchar set, `/` and `%`. */
const NEEDS_ESCAPE = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/gu;
/** `%2F` and `%5C`: the router decodes them into the parameter a handler reads, after the checks have run. */
const ENCODED_SEPARATOR = /%(2f|5c)/i;

/** `.` or `..`, alone or before `;` (a router with `useSemicolonDelimiter` cuts the path at the `;`). */
function isDotSegment(segment: string): boolean {
  const end = segment.indexOf(';');
  const name = end < 0 ? segment : segment.slice(0, end);
  return name === '.' || name === '..';
}

/** One escape in its canonical form: unreserved characters decoded, others with upper-case hex. */
function canonicalEscape(escape: string, hex: string): string {
  const char = String.fromCharCode(parseInt(hex, 16));
  return UNRESERVED.test(char) ? char : escape.toUpperCase();
}

/**
 * A path as written by a person (a permission, say) in the form normalizePath gives a request path:
 * `docs/my file` -> `docs/my%20file`, `café` -> `caf%C3%A9`, `%7e` -> `~`.
 */
export function canonicalPathText(text: string): string {
  const escaped = text.replace(NEEDS_ESCAPE, (char) => encodeURIComponent(char));
  return escaped.includes('%') ? escaped.replace(ESCAPE, canonicalEscape) : escaped;
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
 * Escaped unreserved characters decoded, other escapes upper-cased, and repeated slashes collapsed, so
 * `%61cme`, `%c3%a9` or `a//b` cannot dodge a check. Returns undefined when the checks and the handler could see different segments: a
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
    normalized = path.replace(ESCAPE, canonicalEscape);
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
