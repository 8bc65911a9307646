/** One line of a JSONL embedding corpus: `{"id": "...", "text": "...", "metadata": {...}}` (metadata optional). */

export interface CorpusRecord {
  id: string;
  text: string;
  metadata?: Record<string, unknown>;
}

export type CorpusLine = { record: CorpusRecord } | { problem: string };

const KEYS = new Set(['id', 'text', 'metadata']);
/** The vector store's own bound on ids; a longer id could be embedded but never stored. */
export const MAX_CORPUS_ID_CHARS = 512;

/** Parses and checks one non-blank line; a problem names the field, never echoes the line. */
export function parseCorpusLine(line: string): CorpusLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { problem: 'not valid JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'must be a JSON object' };
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !KEYS.has(key));
  if (unknown !== undefined) return { problem: `unknown field "${unknown.slice(0, 40)}" (allowed: id, text, metadata)` };
  const { id, text, metadata } = fields;
  if (typeof id !== 'string' || id.trim() === '' || id.length > MAX_CORPUS_ID_CHARS) {
    return { problem: `id must be a non-empty string of at most ${MAX_CORPUS_ID_CHARS} characters` };
  }
  if (typeof text !== 'string' || text.trim() === '') return { problem: 'text must be a non-empty string' };
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))) {
    return { problem: 'metadata must be a JSON object' };
  }
  return { record: metadata === undefined ? { id, text } : { id, text, metadata: metadata as Record<string, unknown> } };
}
