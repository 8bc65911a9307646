import { RecordRegexes, compilePermission } from '../auth/rbac/permission-matcher';
import { parseLastUpdate } from '../auth/rbac/rbac-record';

/** The record as `tollgate rbac load` writes it (docs/decisions.md A8). */
export interface RbacRecordDocument {
  last_update: number;
  permissions: Record<string, string[]>;
}

export type RbacFileResult = { ok: true; record: RbacRecordDocument } | { ok: false; problems: string[] };

const TOP_LEVEL_KEYS = new Set(['last_update', 'permissions']);
/** HTTP methods a request can carry; any other method part is a typo that would never match. */
const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options', '*']);

/**
 * Strict check of an RBAC record file. Unlike the guard, which skips malformed entries at run time,
 * the CLI refuses the whole file so a typo never silently drops a grant. Without `last_update` the
 * load time is used, which is what makes running servers drop their cached permissions.
 */
export function parseRbacRecordFile(text: string, label: string, nowSeconds: number): RbacFileResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`${label}: not valid JSON (${(error as Error).message})`] };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problems: [`${label}: must be a JSON object {"last_update": ..., "permissions": {...}}`] };
  }
  const document = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(document)) {
    if (!TOP_LEVEL_KEYS.has(key)) problems.push(`${label}: ${key}: unknown key (expected last_update and permissions)`);
  }

  let lastUpdate = nowSeconds;
  if (document.last_update !== undefined) {
    const parsed = parseLastUpdate(document.last_update);
    if (parsed === undefined) problems.push(`${label}: last_update: must be epoch seconds (or milliseconds)`);
    else lastUpdate = parsed;
  }

  const permissions = document.permissions;
  if (permissions === null || typeof permissions !== 'object' || Array.isArray(permissions)) {
    problems.push(`${label}: permissions: must be an object mapping role ids to lists of "<resource>:<method>" strings`);
    return { ok: false, problems };
  }
  const out: Record<string, string[]> = {};
  const regexes = new RecordRegexes();
  for (const [role, list] of Object.entries(permissions as Record<string, unknown>)) {
    const where = `${label}: permissions.${role}`;
    if (role.trim() === '') problems.push(`${label}: permissions: a role id must not be empty`);
    if (!Array.isArray(list)) {
      problems.push(`${where}: must be an array of "<resource>:<method>" strings`);
      continue;
    }
    list.forEach((permission, index) => {
      const before = problems.length;
      compilePermission(permission, (message) => problems.push(`${where}[${index}]: ${message}`), regexes);
      if (problems.length > before || typeof permission !== 'string') return;
      const method = permission.slice(permission.lastIndexOf(':') + 1).toLowerCase();
      if (!METHODS.has(method)) {
        problems.push(`${where}[${index}]: method "${method}" must be one of ${[...METHODS].join(', ')}`);
      }
    });
    out[role] = list as string[];
  }
  return problems.length ? { ok: false, problems } : { ok: true, record: { last_update: lastUpdate, permissions: out } };
}
