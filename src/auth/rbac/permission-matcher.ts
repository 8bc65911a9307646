/**
 * Permission strings `<resource>:<method>` (DECISIONS.md A8), compiled once per record version.
 * Pure: no Nest, no I/O.
 */
import type { RE2JS } from 're2js';
import { compilePathRegex, type PathRegexResult } from './permission-regex';

/** Longer regex sources are refused: they cost load time and memory for no real use. */
export const MAX_REGEX_PATTERN_LENGTH = 512;
/**
 * Distinct regex sources one record may hold. Building a hostile pattern's automaton before refusing it
 * takes up to ~5 ms, so this bounds the time a record stalls the event loop when it is compiled (~0.16 s
 * for 32 hostile patterns) and the regexes one request may walk.
 */
export const MAX_REGEX_PERMISSIONS = 32;

/** The regexes of one record, by source: a source used in several roles is compiled once and counted once. */
export type RecordRegexes = Map<string, PathRegexResult>;

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
  regexes: RecordRegexes = new Map(),
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
    let compiled = regexes.get(source);
    if (compiled === undefined) {
      if (regexes.size >= MAX_REGEX_PERMISSIONS) {
        warn(`permission ${JSON.stringify(permission)} skipped: the record already holds ${MAX_REGEX_PERMISSIONS} distinct regular expressions, the most one record may hold`);
        return undefined;
      }
      compiled = compilePathRegex(source);
      regexes.set(source, compiled);
    }
    if (!compiled.ok) {
      warn(`permission ${JSON.stringify(permission)} skipped: regular expression ${compiled.reason}`);
      return undefined;
    }
    return { kind: 'regex', method, regex: compiled.regex };
  }
  if (resource.endsWith('/*')) {
    return { kind: 'prefix', method, prefix: trimOneSlash(resource.slice(0, -2)) };
  }
  if (resource.includes('*')) {
    // Only `*` alone and a trailing `/*` have a defined meaning; guessing at others could over-grant.
    warn(`permission ${JSON.stringify(permission)} skipped: '*' is only allowed alone or as a trailing '/*'`);
    return undefined;
  }
  return { kind: 'literal', method, path: trimOneSlash(resource) };
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
      return permission.regex.testExact(resourcePath);
  }
}

/** Compiles every role's list; malformed lists and entries are skipped with a warning. */
export function compilePermissions(
  permissions: Readonly<Record<string, readonly unknown[]>>,
  warn: PermissionWarning,
): CompiledPermissions {
  const compiled = new Map<string, CompiledPermission[]>();
  const regexes: RecordRegexes = new Map();
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
