/**
 * Turns context items (search results, documents, plain strings) into the text placed in a prompt.
 * Generic bookkeeping fields are left out, and values under sensitive keys are never rendered.
 */

export type ContextItem = string | Record<string, unknown>;

/** Fields that describe a record rather than its content (configurable: `ai.excluded_context_fields`). */
export const DEFAULT_EXCLUDED_CONTEXT_FIELDS: readonly string[] = ['id', '_id', 'embedding', 'embeddings', 'vector', 'score', 'created_at', 'updated_at'];
/** Always treated as sensitive, in provider info and context alike; the configured list adds to it (docs/decisions.md B4). */
export const BUILT_IN_SENSITIVE_KEYS: readonly string[] = ['api_key', 'password', 'token', 'secret'];

export interface ContextRenderingOptions {
  excludedFields: readonly string[];
  sensitiveKeys: readonly string[];
}

/** Lower-cased, with `-` and camelCase folded to `_`, so `apiKey`, `API-KEY` and `api_key` are one key. */
export function normalizeKey(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/-/g, '_').toLowerCase();
}

/** A key is sensitive when it equals a sensitive name or ends with `_<name>` (`openai_api_key`, `auth_token`). */
export function isSensitiveKey(key: string, sensitiveKeys: readonly string[]): boolean {
  const normalized = normalizeKey(key);
  return sensitiveKeys.some((name) => {
    const target = normalizeKey(name);
    return normalized === target || normalized.endsWith(`_${target}`);
  });
}

/** Copies a value without any sensitive key, at any depth. */
export function redactSensitive(value: unknown, sensitiveKeys: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => redactSensitive(item, sensitiveKeys));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (!isSensitiveKey(key, sensitiveKeys)) out[key] = redactSensitive(inner, sensitiveKeys);
  }
  return out;
}

/**
 * Numbered blocks, one per item: a string as it is; an object as `key: value` lines in its own key order,
 * nested values as compact JSON. Items left empty after filtering are dropped.
 */
export function renderContextItems(items: readonly ContextItem[], options: ContextRenderingOptions): string {
  // Most calls carry no context; building the key sets would be the whole cost of them.
  if (items.length === 0) return '';
  const excluded = new Set(options.excludedFields.map(normalizeKey));
  const sensitive = [...BUILT_IN_SENSITIVE_KEYS, ...options.sensitiveKeys];
  const blocks: string[] = [];
  for (const item of items) {
    const text = typeof item === 'string' ? item.trim() : renderRecord(item, excluded, sensitive);
    if (text !== '') blocks.push(`[${blocks.length + 1}] ${text}`);
  }
  return blocks.join('\n\n');
}

function renderRecord(record: Record<string, unknown>, excluded: Set<string>, sensitive: readonly string[]): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined || value === null || excluded.has(normalizeKey(key)) || isSensitiveKey(key, sensitive)) continue;
    const text = typeof value === 'string' ? value.trim() : JSON.stringify(redactSensitive(value, sensitive));
    if (text !== '') lines.push(`${key}: ${text}`);
  }
  return lines.join('\n');
}
