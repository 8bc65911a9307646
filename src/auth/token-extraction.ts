/** Where the token comes from (docs/decisions.md A1). Pure. */

export type TokenSource =
  | { token: string }
  | { code: 'missing_token' | 'invalid_authorization_header'; detail: string };

const BEARER = /^\s*bearer(?:\s+(.*))?$/is;

/** Value of one cookie from a Cookie header; tokens are base64url, so no decoding is needed. */
export function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!text) return undefined;
  for (const pair of text.split(';')) {
    const equals = pair.indexOf('=');
    if (equals < 0 || pair.slice(0, equals).trim() !== name) continue;
    let value = pair.slice(equals + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    return value || undefined;
  }
  return undefined;
}

/**
 * `Authorization: Bearer <token>` (scheme case-insensitive, whitespace trimmed); without that header,
 * the cookie named `cookieName` when one is configured.
 */
export function extractToken(
  headers: Record<string, string | string[] | undefined>,
  cookieName?: string,
): TokenSource {
  const header = headers.authorization;
  const authorization = Array.isArray(header) ? header[0] : header;
  if (authorization === undefined || authorization.trim() === '') {
    const fromCookie = cookieName ? cookieValue(headers.cookie, cookieName) : undefined;
    if (fromCookie) return { token: fromCookie };
    return { code: 'missing_token', detail: 'no Authorization header' };
  }
  // The common spelling, answered without the regular expression; the same token it would capture.
  if (authorization.startsWith('Bearer ')) {
    const token = authorization.slice(7).trim();
    if (token) return { token };
  }
  const match = BEARER.exec(authorization);
  if (!match) return { code: 'invalid_authorization_header', detail: 'the Authorization scheme is not Bearer' };
  const token = (match[1] ?? '').trim();
  if (!token) return { code: 'invalid_authorization_header', detail: 'the Bearer token is empty' };
  return { token };
}
