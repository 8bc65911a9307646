/** Byte length of `text` in UTF-8 without allocating a buffer. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The longest prefix of `text` that fits `maxBytes` in UTF-8, cut on a character boundary: a multi-byte
 * character (or surrogate pair) that does not fit entirely is dropped, never split into U+FFFD.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // 0b10xxxxxx bytes continue a character; back up to the first byte of the one that does not fit.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}
