/**
 * Reading the parts of a request the guards decide on: path, normalised path, host. Pure; shared by the
 * tenant checks, skip paths and RBAC so all three see a request the same way.
 */

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
 * Escaped unreserved characters decoded and repeated slashes collapsed, so `%61cme` or `a//b` cannot
 * dodge a check. Returns undefined for `.`/`..` segments, which no check may be applied to (they could
 * climb out of a prefix once a proxy or the router resolves them).
 */
export function normalizePath(path: string): string | undefined {
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
