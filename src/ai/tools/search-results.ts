/** Normalization shared by the adapters: one result shape, no URL-less items, at most `limit` items. */
import type { SearchResult } from './search-tool.interface';

/** Longest title and snippet kept per result; the rest of a runaway field is cut. */
const MAX_TITLE_CHARS = 500;
const MAX_SNIPPET_CHARS = 2000;

export interface RawResult {
  title?: unknown;
  url?: unknown;
  snippet?: unknown;
  source?: unknown;
}

/** Keeps items with an http(s) URL, in upstream order, and stops at `limit`. */
export function normalizeResults(items: readonly RawResult[], limit: number): SearchResult[] {
  const results: SearchResult[] = [];
  for (const item of items) {
    if (results.length >= limit) break;
    const url = httpUrl(item.url);
    if (url === undefined) continue;
    results.push({
      title: text(item.title, MAX_TITLE_CHARS) || url,
      url,
      snippet: text(item.snippet, MAX_SNIPPET_CHARS),
      source: text(item.source, MAX_TITLE_CHARS) || hostOf(url),
    });
  }
  return results;
}

function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** Collapses whitespace (engines return snippets with newlines and runs of spaces) and bounds the length. */
function text(value: unknown, max: number): string {
  if (typeof value !== 'string') return '';
  const collapsed = value.replace(/\s+/g, ' ').trim();
  return collapsed.length > max ? `${collapsed.slice(0, max - 1)}…` : collapsed;
}

function hostOf(url: string): string {
  return new URL(url).hostname;
}
