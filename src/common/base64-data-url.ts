/**
 * `data:<type>;base64,<payload>` read without a quantified regular expression over the payload: a 15 MiB image
 * under `[A-Za-z0-9+/]+=*$` can exhaust V8's backtracking stack (RangeError, seen in a test run), so only the
 * short header is matched and the payload is checked by a search for a character outside the alphabet.
 */
const HEADER = /^data:(image\/[a-z0-9.+-]+);base64,/i;
const OUTSIDE_ALPHABET = /[^A-Za-z0-9+/=]/;

/** The media type (lower case) and payload of a base64 image data URL; undefined for anything else. `maxPadding` bounds the trailing `=`. */
export function base64ImageDataUrl(url: string, maxPadding = Infinity): { mediaType: string; data: string } | undefined {
  const header = HEADER.exec(url.slice(0, 128));
  if (!header) return undefined;
  const data = url.slice(header[0].length);
  if (!isBase64Payload(data, maxPadding)) return undefined;
  return { mediaType: header[1].toLowerCase(), data };
}

/** Base64 characters, at least one before the padding, `=` only at the end and at most `maxPadding` of them. */
export function isBase64Payload(data: string, maxPadding = Infinity): boolean {
  if (data.length === 0 || OUTSIDE_ALPHABET.test(data)) return false;
  const padding = data.indexOf('=');
  if (padding === -1) return true;
  return padding > 0 && data.length - padding <= maxPadding && data.slice(padding) === '='.repeat(data.length - padding);
}
