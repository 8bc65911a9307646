/**
 * Permission strings `<resource>:<method>` (docs/decisions.md A8), compiled once per record version.
 * Pure: no Nest, no I/O.
 */
import type { RE2JS } from 're2js';
import { canonicalPathText } from '../request-parts';
import { MAX_REGEX_PROGRAM_SIZE, compilePathRegex, type PathRegexResult } from './permission-regex';

/** Longer regex sources are refused: they cost load time and memory for no real use. */
export const MAX_REGEX_PATTERN_LENGTH = 512;
/**
 * Distinct regex sources one record may hold, accepted or refused: each costs load time to compile or
 * refuse, and each accepted one is walked by a request no other permission grants.
 */
export const MAX_REGEX_PERMISSIONS = 32;
/**
 * The program size all of a record's regexes may compile to together. With MAX_REGEX_PERMISSIONS and each
 * pattern's own automaton bound, loading the most hostile record stalls the event loop ~0.2 s at worst.
 */
export const MAX_RECORD_REGEX_PROGRAM_SIZE = 4 * MAX_REGEX_PROGRAM_SIZE;

/**
 * Longer resource paths match no regex permission. Denials are not cached, so without a bound every denied
 * request for a 16 KiB path would walk each of a record's regexes over all of it (~6 ms for 32 hostile ones;
 * ~0.8 ms at this bound).
 */
export const MAX_REGEX_RESOURCE_PATH_LENGTH = 2_048;

/** The regexes of one record, by source: a source used in several roles is compiled once and counted once. */
export class RecordRegexes {
  private readonly bySource = new Map<string, PathRegexResult>();
  private programSize = 0;

  /** The compiled pattern, or why it is refused, as a phrase naming what was refused. */
  compile(source: string): { ok: true; regex: RE2JS } | { ok: false; reason: string } {
    const known = this.bySource.get(source);
    if (known) return this.described(known);
    if (this.bySource.size >= MAX_REGEX_PERMISSIONS) {
      return {
        ok: false,
        reason: `the record already holds ${MAX_REGEX_PERMISSIONS} distinct regular expressions (accepted or refused), the most one record may hold`,
      };
    }
    const remaining = MAX_RECORD_REGEX_PROGRAM_SIZE - this.programSize;
    const result = compilePathRegex(source, Math.min(MAX_REGEX_PROGRAM_SIZE, remaining));
    this.programSize += result.programSize;
    this.bySource.set(source, result);
    if (!result.ok && result.refusal === 'size' && remaining < MAX_REGEX_PROGRAM_SIZE) {
      return {
        ok: false,
        reason: `the record's regular expressions would expand past ${MAX_RECORD_REGEX_PROGRAM_SIZE} instructions together, the most one record may hold`,
      };
    }
    return this.described(result);
  }

  private described(result: PathRegexResult): { ok: true; regex: RE2JS } | { ok: false; reason: string } {
    return result.ok ? result : { ok: false, reason: `regular expression ${result.reason}` };
  }
}

const METHOD_PATTERN = /^(?:\*|[a-z]+)$/;

export type CompiledPermission =
  | { readonly kind: 'any'; readonly method: string }
  | { readonly kind: 'literal'; readonly method: string; readonly path: string }
  | { readonly kind: 'prefix'; readonly method: string; readonly prefix: string }
  | { readonly kind: 'regex'; readonly method: string; readonly regex: RE2JS };

/** Role id -> its compiled permissions. */
export type CompiledPermissions = ReadonlyMap<string, readonly CompiledPermission[]>;

export type PermissionWarning = (message: string) => void;

/** One slash at each end is not significant in a literal path (`/reports/` = `reports`). */
function trimOneSlash(path: string): string {
  let start = 0;
  let end = path.length;
  if (path.charCodeAt(0) === 47) start = 1;
  if (end > start && path.charCodeAt(end - 1) === 47) end -= 1;
  return path.slice(start, end);
}

/**
 * Parses one permission string; returns undefined (and warns) when it is malformed.
 * Split on the LAST ':' so a regular expression may itself contain ':'.
 */
export function compilePermission(
  permission: unknown,
  warn: PermissionWarning,
  regexes = new RecordRegexes(),
): CompiledPermission | undefined {
  if (typeof permission !== 'string') {
    warn(`permission skipped: expected a string, got ${permission === null ? 'null' : typeof permission}`);
    return undefined;
  }
  const separator = permission.lastIndexOf(':');
  if (separator < 0) {
    warn(`permission ${JSON.stringify(permission)} skipped: no ':<method>' part`);
    return undefined;
  }
  const resource = permission.slice(0, separator).trim();
  const method = permission.slice(separator + 1).trim().toLowerCase();
  if (!METHOD_PATTERN.test(method)) {
    warn(`permission ${JSON.stringify(permission)} skipped: invalid method ${JSON.stringify(method)}`);
    return undefined;
  }
  if (resource === '*') return { kind: 'any', method };
  if (resource.startsWith('%r{') && resource.endsWith('}')) {
    const source = resource.slice(3, -1);
    if (source.length > MAX_REGEX_PATTERN_LENGTH) {
      warn(`permission ${JSON.stringify(permission)} skipped: regular expression longer than ${MAX_REGEX_PATTERN_LENGTH} characters`);
      return undefined;
    }
    const compiled = regexes.compile(source);
    if (!compiled.ok) {
      warn(`permission ${JSON.stringify(permission)} skipped: ${compiled.reason}`);
      return undefined;
    }
    return { kind: 'regex', method, regex: compiled.regex };
  }
  if (resource.endsWith('/*')) {
    return { kind: 'prefix', method, prefix: canonicalPathText(trimOneSlash(resource.slice(0, -2))) };
  }
  if (resource.includes('*')) {
    // Only `*` alone and a trailing `/*` have a defined meaning; guessing at others could over-grant.
    warn(`permission ${JSON.stringify(permission)} skipped: '*' is only allowed alone or as a trailing '/*'`);
    return undefined;
  }
  return { kind: 'literal', method, path: canonicalPathText(trimOneSlash(resource)) };
}

/** `method` must already be lower case; `resourcePath` has no leading or trailing slash. */
export function permissionMatches(permission: CompiledPermission, resourcePath: string, method: string): boolean {
  if (permission.method !== '*' && permission.method !== method) return false;
  switch (permission.kind) {
    case 'any':
      return true;
    case 'literal':
      return permission.path === resourcePath;
    case 'prefix':
      return (
        permission.prefix === '' ||
        resourcePath === permission.prefix ||
        (resourcePath.startsWith(permission.prefix) && resourcePath.charCodeAt(permission.prefix.length) === 47)
      );
    case 'regex':
      return resourcePath.length <= MAX_REGEX_RESOURCE_PATH_LENGTH && permission.regex.testExact(resourcePath);
  }
}

/** Compiles every role's list; malformed lists and entries are skipped with a warning. */
export function compilePermissions(
  permissions: Readonly<Record<string, readonly unknown[]>>,
  warn: PermissionWarning,
): CompiledPermissions {
  const compiled = new Map<string, CompiledPermission[]>();
  const regexes = new RecordRegexes();
  for (const role of Object.keys(permissions)) {
    const list: CompiledPermission[] = [];
    for (const entry of permissions[role]) {
      const permission = compilePermission(entry, (message) => warn(`role ${JSON.stringify(role)}: ${message}`), regexes);
      if (permission) list.push(permission);
    }
    compiled.set(role, list);
  }
  return compiled;
}

/** True when any of the roles holds a permission matching the resource path and method. */
export function isAuthorized(
  compiled: CompiledPermissions,
  roleIds: readonly string[],
  resourcePath: string,
  method: string,
): boolean {
  const wanted = method.toLowerCase();
  for (const role of roleIds) {
    const list = compiled.get(role);
    if (!list) continue;
    for (const permission of list) {
      if (permissionMatches(permission, resourcePath, wanted)) return true;
    }
  }
  return false;
}
