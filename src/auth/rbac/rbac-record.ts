/**
 * The RBAC permission record (docs/decisions.md A8): `{ last_update, permissions: { <role>: [<permission>...] } }`,
 * given as an object or a JSON string. Pure.
 */

/** Above this, `last_update` is read as milliseconds (10^12 s is the year 33658). */
const MILLISECONDS_THRESHOLD = 1e12;

export interface RbacRecord {
  /** Epoch seconds. */
  lastUpdate: number;
  /** Role id (always a string, as JSON keys are) -> permission strings, malformed entries removed. */
  permissions: Record<string, string[]>;
}

export type RbacRecordResult =
  | { ok: true; record: RbacRecord; warnings: string[] }
  | { ok: false; reason: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Epoch seconds from a number or a digit string; ms values are scaled down. */
export function parseLastUpdate(value: unknown): number | undefined {
  let numeric: number;
  if (typeof value === 'number') numeric = value;
  else if (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)) numeric = Number(value);
  else return undefined;
  if (!Number.isFinite(numeric) || numeric < 0) return undefined;
  return Math.floor(numeric > MILLISECONDS_THRESHOLD ? numeric / 1000 : numeric);
}

export function parseRbacRecord(input: unknown): RbacRecordResult {
  if (input === undefined || input === null) return { ok: false, reason: 'record is missing' };
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return { ok: false, reason: 'record is not valid JSON' };
    }
  }
  if (!isPlainObject(value)) return { ok: false, reason: 'record is not an object' };
  const lastUpdate = parseLastUpdate(value.last_update);
  if (lastUpdate === undefined) {
    return { ok: false, reason: 'record has no valid last_update (epoch seconds or milliseconds)' };
  }
  if (!isPlainObject(value.permissions)) return { ok: false, reason: 'record has no permissions object' };

  const warnings: string[] = [];
  const permissions: Record<string, string[]> = Object.create(null);
  for (const [role, list] of Object.entries(value.permissions)) {
    if (!Array.isArray(list)) {
      warnings.push(`role ${JSON.stringify(role)} skipped: permissions must be an array`);
      continue;
    }
    const kept: string[] = [];
    for (const entry of list) {
      if (typeof entry === 'string' && entry.trim() !== '') kept.push(entry);
      else warnings.push(`role ${JSON.stringify(role)}: non-string or empty permission skipped`);
    }
    permissions[role] = kept;
  }
  return { ok: true, record: { lastUpdate, permissions }, warnings };
}

/** The JSON shape written to the store (what external systems write too). */
export function serializeRbacRecord(record: RbacRecord): { last_update: number; permissions: Record<string, string[]> } {
  return { last_update: record.lastUpdate, permissions: { ...record.permissions } };
}
