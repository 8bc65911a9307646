import { modelGlobListProblems } from '../allow-lists/model-glob';

export type BudgetPeriod = 'day' | 'month';
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'month'];

/** Money in integer micro-dollars (1 USD = 1_000_000), or tokens; exactly one of the two is set. */
export interface KeyBudget {
  period: BudgetPeriod;
  microUsd?: number;
  tokens?: number;
}

/** What a store keeps about a key: never the key itself, only its SHA-256. Times are ISO-8601 UTC. */
export interface ApiKeyRecord {
  id: string;
  name?: string;
  tenant: string;
  subTenant?: string;
  /** Globs on provider/model; absent means the key itself restricts nothing. */
  models?: string[];
  budget?: KeyBudget;
  rpm?: number;
  tpm?: number;
  expiresAt?: string;
  createdAt: string;
  revokedAt?: string;
  hash: string;
}

/** The settings an update may change; tenant, sub-tenant, id, hash and the times are fixed at creation. */
export type MutableKeySettings = Pick<ApiKeyRecord, 'name' | 'models' | 'budget' | 'rpm' | 'tpm' | 'expiresAt'>;

/**
 * A create or update request as the CLI and the REST API pass it on, in their units (dollars, a duration
 * such as `30d`). In an update, `null` clears a setting and an absent field keeps it.
 */
export interface KeySpec {
  name?: unknown;
  tenant?: unknown;
  subTenant?: unknown;
  models?: unknown;
  budgetUsd?: unknown;
  budgetTokens?: unknown;
  period?: unknown;
  rpm?: unknown;
  tpm?: unknown;
  expires?: unknown;
}

export type KeySpecField = keyof KeySpec;
/** How the caller spells a field in messages: `--budget-usd` on the CLI, `budget_usd` in the REST API. */
export type FieldLabels = (field: KeySpecField) => string;

export const restFieldLabel: FieldLabels = (field) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
export const cliFieldLabel: FieldLabels = (field) => `--${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;

const NAME_PATTERN = /^[\p{L}\p{N} ._:@+-]{1,100}$/u;
const TENANT_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;
const MAX_MICRO_USD = 1e15;
const MAX_COUNT = 1e12;
const DURATION_PATTERN = /^([1-9][0-9]{0,6})([smhdw])$/;
const DURATION_UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const MAX_DURATION_MS = 3650 * 86_400_000;

/** `30d`, `12h`, `90m`, `2w`, `45s` in milliseconds; undefined for anything else or beyond ten years. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * DURATION_UNIT_MS[match[2]];
  return ms <= MAX_DURATION_MS ? ms : undefined;
}

export interface KeySettingsResult {
  /** For creation: the full settings. For an update: only what changes (`undefined` values clear). */
  settings: Partial<MutableKeySettings> & { tenant?: string; subTenant?: string };
  problems: string[];
}

/**
 * Checks a create (`mode: 'create'`) or update request field by field, each problem naming the field as
 * the caller spells it; converts dollars to micro-dollars and a duration to an expiry time from `now`.
 */
export function validateKeySpec(spec: KeySpec, mode: 'create' | 'update', now: number, label: FieldLabels): KeySettingsResult {
  const problems: string[] = [];
  const settings: KeySettingsResult['settings'] = {};
  const clears = (field: KeySpecField) => mode === 'update' && spec[field] === null;
  const given = (field: KeySpecField) => spec[field] !== undefined && !clears(field);

  if (mode === 'create') {
    if (spec.tenant === undefined || spec.tenant === null) problems.push(`${label('tenant')}: is required`);
    else if (typeof spec.tenant !== 'string' || !TENANT_PATTERN.test(spec.tenant)) problems.push(`${label('tenant')}: must be 1-128 letters, digits or . _ : @ -`);
    else settings.tenant = spec.tenant;
    if (given('subTenant')) {
      if (typeof spec.subTenant !== 'string' || !TENANT_PATTERN.test(spec.subTenant)) problems.push(`${label('subTenant')}: must be 1-128 letters, digits or . _ : @ -`);
      else settings.subTenant = spec.subTenant;
    }
  } else {
    for (const fixed of ['tenant', 'subTenant'] as const) {
      if (spec[fixed] !== undefined) problems.push(`${label(fixed)}: cannot be changed; create a new key instead`);
    }
  }

  if (clears('name')) settings.name = undefined;
  else if (given('name')) {
    if (typeof spec.name !== 'string' || !NAME_PATTERN.test(spec.name)) problems.push(`${label('name')}: must be 1-100 letters, digits, spaces or . _ : @ + -`);
    else settings.name = spec.name;
  }

  if (clears('models')) settings.models = undefined;
  else if (given('models')) {
    if (!Array.isArray(spec.models)) problems.push(`${label('models')}: must be a list of provider/model globs`);
    else if (spec.models.length === 0) problems.push(`${label('models')}: must name at least one provider/model glob`);
    else {
      const globProblems = modelGlobListProblems(label('models'), spec.models);
      problems.push(...globProblems);
      if (!globProblems.length) settings.models = [...new Set(spec.models as string[])];
    }
  }

  validateBudget(spec, mode, label, problems, settings);

  for (const field of ['rpm', 'tpm'] as const) {
    if (clears(field)) settings[field] = undefined;
    else if (given(field)) {
      const value = spec[field];
      if (!isPositiveInteger(value)) problems.push(`${label(field)}: must be a positive integer (got ${describe(value)})`);
      else settings[field] = value;
    }
  }

  if (clears('expires')) settings.expiresAt = undefined;
  else if (given('expires')) {
    const ms = typeof spec.expires === 'string' ? parseDuration(spec.expires) : undefined;
    if (ms === undefined) problems.push(`${label('expires')}: must be a duration such as 30d, 12h, 90m, 2w or 45s, up to 3650d (got ${describe(spec.expires)})`);
    else settings.expiresAt = new Date(now + ms).toISOString();
  }
  return { settings, problems };
}

function validateBudget(spec: KeySpec, mode: 'create' | 'update', label: FieldLabels, problems: string[], settings: KeySettingsResult['settings']): void {
  const clearing = mode === 'update' && (spec.budgetUsd === null || spec.budgetTokens === null);
  const usd = spec.budgetUsd ?? undefined;
  const tokens = spec.budgetTokens ?? undefined;
  const period = spec.period ?? undefined;
  if (clearing) {
    if (usd !== undefined || tokens !== undefined || period !== undefined) problems.push(`${label('budgetUsd')}: clearing the budget takes no amount or ${label('period')}`);
    else settings.budget = undefined;
    return;
  }
  if (usd === undefined && tokens === undefined) {
    if (period !== undefined) problems.push(`${label('period')}: applies to a budget only (set ${label('budgetUsd')} or ${label('budgetTokens')})`);
    return;
  }
  if (usd !== undefined && tokens !== undefined) {
    problems.push(`${label('budgetUsd')}: set either ${label('budgetUsd')} or ${label('budgetTokens')}, not both`);
    return;
  }
  const budget: Partial<KeyBudget> = {};
  if (usd !== undefined) {
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd <= 0) problems.push(`${label('budgetUsd')}: must be a positive amount of dollars (got ${describe(usd)})`);
    else if (usd * 1e6 > MAX_MICRO_USD) problems.push(`${label('budgetUsd')}: must be at most ${MAX_MICRO_USD / 1e6} dollars`);
    else if (Math.round(usd * 1e6) === 0) problems.push(`${label('budgetUsd')}: must be at least 0.000001 dollars`);
    else budget.microUsd = Math.round(usd * 1e6);
  } else if (!isPositiveInteger(tokens)) problems.push(`${label('budgetTokens')}: must be a positive integer (got ${describe(tokens)})`);
  else budget.tokens = tokens;
  if (period === undefined) problems.push(`${label('period')}: is required with a budget (day or month)`);
  else if (!BUDGET_PERIODS.includes(period as BudgetPeriod)) problems.push(`${label('period')}: must be day or month (got ${describe(period)})`);
  else budget.period = period as BudgetPeriod;
  if (budget.period && (budget.microUsd !== undefined || budget.tokens !== undefined)) settings.budget = budget as KeyBudget;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_COUNT;
}

function describe(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** The record after an update; `undefined` in `changes` clears the setting. */
export function applyKeyChanges(record: ApiKeyRecord, changes: Partial<MutableKeySettings>): ApiKeyRecord {
  const next: ApiKeyRecord = { ...record };
  for (const [field, value] of Object.entries(changes) as Array<[keyof MutableKeySettings, unknown]>) {
    if (value === undefined) delete next[field];
    else (next as unknown as Record<string, unknown>)[field] = value;
  }
  return next;
}

/** Why a stored key cannot authenticate at `now`, or undefined when it can. */
export function keyInactiveReason(record: ApiKeyRecord, now: number): 'revoked' | 'expired' | undefined {
  if (record.revokedAt !== undefined) return 'revoked';
  if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now) return 'expired';
  return undefined;
}

/** A record as shown to administrators (CLI, REST): never the hash, money in dollars. */
export function publicKeyView(record: ApiKeyRecord, now: number) {
  return {
    id: record.id,
    name: record.name ?? null,
    tenant: record.tenant,
    sub_tenant: record.subTenant ?? null,
    models: record.models ?? null,
    budget: record.budget ? budgetView(record.budget) : null,
    rpm: record.rpm ?? null,
    tpm: record.tpm ?? null,
    expires_at: record.expiresAt ?? null,
    created_at: record.createdAt,
    revoked_at: record.revokedAt ?? null,
    status: keyInactiveReason(record, now) ?? 'active',
  };
}

export type PublicKeyView = ReturnType<typeof publicKeyView>;

function budgetView(budget: KeyBudget): { period: BudgetPeriod; usd?: number; tokens?: number } {
  return budget.microUsd !== undefined ? { period: budget.period, usd: budget.microUsd / 1e6 } : { period: budget.period, tokens: budget.tokens };
}
