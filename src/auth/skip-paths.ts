/** `skip_paths` matching (docs/decisions.md A4). Pure; entries are compiled once at start. */
import type { SkipPath } from './auth-module-options.interface';
import { normalizePath, requestPathOf } from './request-parts';

export type SkipPathMatcher = (url: string) => boolean;

const REGEX_FORM = /^%r\{([\s\S]*)\}$/;

/** `%r{...}` -> its pattern source, else undefined. */
export function regexSource(entry: string): string | undefined {
  return REGEX_FORM.exec(entry)?.[1];
}

function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * One matcher for the whole list. Exact entries go into a Set; `prefix/*` entries match at a segment
 * boundary; regexes are anchored as written. A path with dot segments never matches: skipping auth for
 * `/public/../admin` would trust whoever resolves the dots later. Entries must already be validated.
 */
export function compileSkipPaths(entries: readonly SkipPath[]): SkipPathMatcher {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  const patterns: RegExp[] = [];
  for (const entry of entries) {
    if (entry instanceof RegExp) {
      patterns.push(new RegExp(entry.source, entry.flags.replace(/[gy]/g, '')));
      continue;
    }
    const source = regexSource(entry);
    if (source !== undefined) patterns.push(new RegExp(source));
    else if (entry.endsWith('/*')) prefixes.push(entry.slice(0, -2));
    else exact.add(withoutTrailingSlash(entry));
  }
  if (exact.size === 0 && prefixes.length === 0 && patterns.length === 0) return () => false;

  return (url) => {
    const path = normalizePath(requestPathOf(url));
    if (path === undefined) return false;
    const bare = withoutTrailingSlash(path);
    if (exact.has(bare)) return true;
    for (const prefix of prefixes) {
      if (bare === prefix || path.startsWith(`${prefix}/`)) return true;
    }
    for (const pattern of patterns) {
      if (pattern.test(path)) return true;
    }
    return false;
  };
}
