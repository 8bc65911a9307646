/**
 * Usage reports: the query (range, grouping, tenant scope), its validation with errors naming the
 * parameter, and the aggregation of entries the memory store and the roll-up share.
 */
import type { LedgerEntry } from './ledger-entry';

export const USAGE_GROUPS = ['tenant', 'sub_tenant', 'subject', 'key', 'provider', 'model', 'day'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageQuery {
  /** Epoch milliseconds, inclusive. */
  from: number;
  /** Epoch milliseconds, exclusive. */
  to: number;
  groupBy: UsageGroup;
  /** Only this tenant's calls; undefined for every tenant (the admin's view). */
  tenant?: string;
}

/** One group's sums. Tokens count every call; `costMicros` sums the priced ones, `unpricedCalls` counts the rest. */
export interface UsageRow {
  /** The group's value: a tenant, a `provider/model`, a day (`YYYY-MM-DD`)...; null for calls without one (no tenant). */
  group: string | null;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costMicros: number;
  unpricedCalls: number;
  estimatedCalls: number;
}

export class UsageQueryError extends Error {
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(message);
    this.name = 'UsageQueryError';
  }
}

const DAY_MS = 86_400_000;
/** The largest range one report covers, so a query cannot ask the store to sum years of entries by day. */
export const MAX_USAGE_RANGE_DAYS = 400;

/** `2026-11-20`, `2026-11-20T10:00:00Z` (an offset required with a time), or epoch milliseconds. */
export function parseInstant(value: string, parameter: string): number {
  const trimmed = value.trim();
  if (/^\d{1,15}$/.test(trimmed)) return Number(trimmed);
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(trimmed);
  const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(trimmed);
  const time = dateOnly ? Date.parse(`${trimmed}T00:00:00Z`) : dateTime ? Date.parse(trimmed) : Number.NaN;
  // Date.parse rolls 2026-02-30 over into March; a real calendar date reads back unchanged.
  const calendarDate = trimmed.slice(0, 10);
  const rolledOver = dateOnly && !Number.isNaN(time) && utcDay(time) !== calendarDate;
  if (Number.isNaN(time) || rolledOver || (dateTime && !isCalendarDate(calendarDate))) {
    throw new UsageQueryError(parameter, `${parameter} must be a date (YYYY-MM-DD), a date-time with an offset (2026-11-20T10:00:00Z) or epoch milliseconds`);
  }
  return time;
}

function isCalendarDate(date: string): boolean {
  const time = Date.parse(`${date}T00:00:00Z`);
  return !Number.isNaN(time) && utcDay(time) === date;
}

/** `7d`, `12h`, `30m`: how far back from now. */
export function parseSince(value: string, parameter: string, now: number): number {
  const match = /^(\d{1,5})([dhm])$/.exec(value.trim());
  if (!match) throw new UsageQueryError(parameter, `${parameter} must be a duration like 7d, 12h or 30m`);
  const unit = { d: DAY_MS, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
  return now - Number(match[1]) * unit;
}

export function parseGroup(value: string | undefined, parameter: string): UsageGroup {
  if (value === undefined || value === '') return 'day';
  if (!(USAGE_GROUPS as readonly string[]).includes(value)) throw new UsageQueryError(parameter, `${parameter} must be one of ${USAGE_GROUPS.join(', ')}`);
  return value as UsageGroup;
}

/** The range check every entry point shares: from before to, and not wider than {@link MAX_USAGE_RANGE_DAYS}. */
export function checkRange(from: number, to: number, names: { from: string; to: string }): void {
  if (from >= to) throw new UsageQueryError(names.from, `${names.from} must be before ${names.to}`);
  if (to - from > MAX_USAGE_RANGE_DAYS * DAY_MS) throw new UsageQueryError(names.to, `${names.from} to ${names.to} must span at most ${MAX_USAGE_RANGE_DAYS} days`);
}

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function utcDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

export function groupValue(entry: LedgerEntry, group: UsageGroup): string | null {
  switch (group) {
    case 'tenant':
      return entry.tenant;
    case 'sub_tenant':
      return entry.subTenant;
    case 'subject':
      return entry.subject;
    case 'key':
      return entry.keyId;
    case 'provider':
      return entry.provider;
    case 'model':
      return `${entry.provider}/${entry.model}`;
    case 'day':
      return utcDay(entry.time);
  }
}

export function emptyRow(group: string | null): UsageRow {
  return { group, calls: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, costMicros: 0, unpricedCalls: 0, estimatedCalls: 0 };
}

/** Rows sorted by group value (nulls last), so reports read the same from every store. */
export function sortRows(rows: UsageRow[]): UsageRow[] {
  return rows.sort((a, b) => (a.group === b.group ? 0 : a.group === null ? 1 : b.group === null ? -1 : a.group < b.group ? -1 : 1));
}

export function aggregate(entries: Iterable<LedgerEntry>, query: UsageQuery): UsageRow[] {
  const rows = new Map<string | null, UsageRow>();
  for (const entry of entries) {
    if (entry.time < query.from || entry.time >= query.to) continue;
    if (query.tenant !== undefined && entry.tenant !== query.tenant) continue;
    const group = groupValue(entry, query.groupBy);
    let row = rows.get(group);
    if (!row) rows.set(group, (row = emptyRow(group)));
    row.calls += 1;
    row.inputTokens += entry.inputTokens;
    row.outputTokens += entry.outputTokens;
    row.cachedTokens += entry.cachedTokens;
    if (entry.costMicros === null) row.unpricedCalls += 1;
    else row.costMicros += entry.costMicros;
    if (entry.estimated) row.estimatedCalls += 1;
  }
  return sortRows([...rows.values()]);
}
