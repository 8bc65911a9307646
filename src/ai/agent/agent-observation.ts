import type { ToolFailureCategory } from './tool-failure-category';
import { truncateUtf8, utf8Length } from './utf8-truncate';

export type Observation =
  | { tool: string; ok: true; result: unknown }
  | { tool: string; ok: false; error: ToolFailureCategory };

/**
 * One observation as JSON text of at most `maxBytes` UTF-8 bytes. A result that does not fit becomes
 * `{"tool","ok":true,"truncated":true,"content":"<JSON text cut on a character boundary>"}`, so what the
 * model reads is always valid JSON whatever the tool returned.
 */
export function serializeObservation(observation: Observation, maxBytes: number): { text: string; truncated: boolean } {
  const whole = safeStringify(observation);
  if (utf8Length(whole) <= maxBytes || !observation.ok) return { text: whole, truncated: false };
  const content = typeof observation.result === 'string' ? observation.result : safeStringify(observation.result);
  const envelope = (text: string) => JSON.stringify({ tool: observation.tool, ok: true, truncated: true, content: text });
  // Escaping can grow the text (quotes, control characters): find the largest cut that fits, by bisection.
  let low = 0;
  let high = maxBytes;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (utf8Length(envelope(truncateUtf8(content, middle))) <= maxBytes) low = middle;
    else high = middle - 1;
  }
  return { text: envelope(truncateUtf8(content, low)), truncated: true };
}

/** JSON text of anything a tool may return: cycles, BigInt and functions do not throw. */
function safeStringify(value: unknown): string {
  const seen = new WeakSet<object>();
  const text = JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner === 'bigint') return inner.toString();
    if (typeof inner === 'function' || typeof inner === 'symbol') return undefined;
    if (inner !== null && typeof inner === 'object') {
      if (seen.has(inner)) return '[circular]';
      seen.add(inner);
    }
    return inner;
  });
  return text ?? 'null';
}
