import type { GovernanceIdentity, GovernanceRequestState } from '../governance-identity';
import { BUDGET_PERIODS, type BudgetPeriod, MICROS_PER_USD, type MeteredScope, SCOPE_KINDS, type ScopeKind, type ScopeLimit } from './budget-scope';

/** A budget of one scope per day or month; `id` `*` applies to every caller of the kind without a rule of its own. */
export interface BudgetRule {
  scope: ScopeKind;
  id: string;
  period: BudgetPeriod;
  micros?: number;
  tokens?: number;
}

/** Requests and tokens per minute of one scope (`*` as above). */
export interface LimitRule {
  scope: ScopeKind;
  id: string;
  rpm?: number;
  tpm?: number;
}

export interface RuleSet {
  budgets: BudgetRule[];
  limits: LimitRule[];
}

/** Limits that come with the caller: a key's record (keys slice) or the mapped claims of a JWT. */
export interface IdentityLimits {
  budget?: { micros?: number; tokens?: number; period: BudgetPeriod };
  rpm?: number;
  tpm?: number;
}

export interface BudgetSources {
  config: RuleSet;
  runtime: RuleSet;
  /** Applies to the `key` scope of a caller that authenticated with a key. */
  key?: IdentityLimits;
  /** Applies to the `subject` scope (the JWT's user). */
  claims?: IdentityLimits;
}

export const WILDCARD_ID = '*';

/** The rules of one set for one scope kind and id. */
interface ScopeRules {
  budgets: BudgetRule[];
  limits: LimitRule[];
}

/** A rule set by scope kind and id, built once per set, so a request looks its few scopes up instead of filtering every rule. */
class RuleIndex {
  private readonly byScope = new Map<string, ScopeRules>();

  constructor(set: RuleSet) {
    for (const rule of set.budgets) this.entry(rule.scope, rule.id).budgets.push(rule);
    for (const rule of set.limits) this.entry(rule.scope, rule.id).limits.push(rule);
  }

  get empty(): boolean {
    return this.byScope.size === 0;
  }

  of(kind: ScopeKind, id: string): ScopeRules | undefined {
    return this.byScope.get(`${kind}\u0000${id}`);
  }

  private entry(kind: ScopeKind, id: string): ScopeRules {
    const key = `${kind}\u0000${id}`;
    let rules = this.byScope.get(key);
    if (!rules) this.byScope.set(key, (rules = { budgets: [], limits: [] }));
    return rules;
  }
}

/** Rule sets are replaced, never changed in place (configuration, and each read of the run-time store). */
const indexes = new WeakMap<RuleSet, RuleIndex>();

function indexOf(set: RuleSet): RuleIndex {
  let index = indexes.get(set);
  if (!index) indexes.set(set, (index = new RuleIndex(set)));
  return index;
}

/**
 * The scopes a request is held to. Each limit field (money, tokens per period; requests, tokens per minute)
 * of each scope is taken from the most specific source that sets it: a run-time rule for the exact id, then
 * the caller's own limits (key record or JWT claims), a configured rule for the exact id, a run-time `*`
 * rule, a configured `*` rule (docs/decisions.md D6).
 */
export function scopesFor(state: GovernanceRequestState, sources: BudgetSources): MeteredScope[] {
  const config = indexOf(sources.config);
  const runtime = indexOf(sources.runtime);
  const scopes: MeteredScope[] = [];
  if (config.empty && runtime.empty && !sources.key && !sources.claims) return scopes;
  for (const [kind, id] of scopeIds(state)) {
    const own = kind === 'key' ? sources.key : kind === 'subject' ? sources.claims : undefined;
    // Most specific first: the order in which a field's first setter wins.
    const ranked = [runtime.of(kind, id), config.of(kind, id), runtime.of(kind, WILDCARD_ID), config.of(kind, WILDCARD_ID)];
    if (!own && ranked.every((rules) => rules === undefined)) continue;
    const [runtimeExact, ...rest] = ranked;
    for (const period of BUDGET_PERIODS) {
      const ownBudget = own?.budget?.period === period ? [own.budget] : [];
      const inPeriod = (rules: ScopeRules | undefined) => rules?.budgets.filter((rule) => rule.period === period) ?? [];
      const candidates = [...inPeriod(runtimeExact), ...ownBudget, ...rest.flatMap(inPeriod)];
      const limit = pick(candidates, { micros: (rule) => rule.micros, tokens: (rule) => rule.tokens });
      if (limit) scopes.push({ kind, id, period, limit });
    }
    const ownRate = own && (own.rpm !== undefined || own.tpm !== undefined) ? [{ rpm: own.rpm, tpm: own.tpm }] : [];
    const candidates = [...(runtimeExact?.limits ?? []), ...ownRate, ...rest.flatMap((rules) => rules?.limits ?? [])];
    const limit = pick(candidates, { requests: (rule) => rule.rpm, tokens: (rule) => rule.tpm });
    if (limit) scopes.push({ kind, id, period: 'minute', limit });
  }
  return scopes;
}

/** The scope ids of a caller; a sub-tenant is named within its tenant (`t-1/north`), a subject by {@link subjectScopeId}. */
export function scopeIds(state: GovernanceRequestState): [ScopeKind, string][] {
  const { tenant, subTenant, keyId } = state.identity;
  const ids: [ScopeKind, string][] = [];
  if (tenant) ids.push(['tenant', tenant]);
  if (tenant && subTenant) ids.push(['sub_tenant', `${tenant}/${subTenant}`]);
  ids.push(['subject', subjectScopeId(state.identity)]);
  if (keyId) ids.push(['key', keyId]);
  return ids;
}

/** The ids of the shared and the admin token as `subject` scopes: the only subject ids without a `/` or `key:`. */
const TOKEN_SUBJECTS: readonly string[] = ['api-token', 'admin-token'];
const KEY_SUBJECT_PREFIX = 'key:';

/**
 * The `subject` scope's id of a caller, which names its counters and the rules that address it: a JWT user is
 * `<tenant>/<user>` (`/<user>` without a tenant), an API key's caller `key:<key id>`, the shared and admin tokens
 * `api-token` and `admin-token`. Only a user's id holds a `/`, and the tenant part escapes `%` and `/`, so the
 * first `/` ends the tenant: user `u1` of two tenants, a user and a key with one id, and a user named `api-token`
 * are each counted apart (docs/decisions.md D7).
 */
export function subjectScopeId(identity: GovernanceIdentity): string {
  if (identity.subjectKind === 'user') return `${escapeTenant(identity.tenant ?? '')}/${identity.subject}`;
  if (identity.subjectKind === 'key') return `${KEY_SUBJECT_PREFIX}${identity.subject}`;
  return identity.subject;
}

/** A tenant id as the first part of a `subject` id: `%` and `/` escaped, so that part ends at the first `/`. */
export function escapeTenant(tenant: string): string {
  return tenant.replace(/%/g, '%25').replace(/\//g, '%2F');
}

/** Whether a `subject` rule id names a user of `tenant` (`*`, keys' and tokens' ids name none). */
export function isSubjectOfTenant(id: string, tenant: string): boolean {
  return id.startsWith(`${escapeTenant(tenant)}/`);
}

/**
 * The ids of `subject` rules that name no caller: rules stored at run time before D7, when a bare `u1` named user
 * `u1` of every tenant. Such a rule binds nobody now; the store logs them so an operator can set them anew.
 */
export function deadSubjectRuleIds(rules: RuleSet): string[] {
  const dead = new Set<string>();
  for (const rule of [...rules.budgets, ...rules.limits]) if (rule.scope === 'subject' && subjectIdProblem(rule.id)) dead.add(rule.id);
  return [...dead];
}

/** Why a `subject` rule id names no caller (an id from before D7 named user `u1` of every tenant), else undefined. */
function subjectIdProblem(id: string): string | undefined {
  if (id === WILDCARD_ID || TOKEN_SUBJECTS.includes(id)) return undefined;
  if (id.startsWith(KEY_SUBJECT_PREFIX) && id.length > KEY_SUBJECT_PREFIX.length && !id.includes('/')) return undefined;
  const slash = id.indexOf('/');
  if (slash >= 0 && slash < id.length - 1) return undefined;
  return `a subject is named <tenant>/<user> (a JWT user; /<user> without a tenant), key:<key id>, api-token, admin-token or *, got ${JSON.stringify(id)}`;
}

function pick<R>(candidates: R[], fields: Partial<Record<keyof ScopeLimit, (rule: R) => number | undefined>>): ScopeLimit | undefined {
  const limit: ScopeLimit = {};
  for (const [field, read] of Object.entries(fields) as [keyof ScopeLimit, (rule: R) => number | undefined][]) {
    const value = candidates.map(read).find((candidate) => candidate !== undefined);
    if (value !== undefined) limit[field] = value;
  }
  return Object.keys(limit).length ? limit : undefined;
}

/** A rule as written in YAML, the admin API or the CLI: dollars as a number, snake_case names. */
export interface RuleInput {
  scope?: unknown;
  id?: unknown;
  usd?: unknown;
  tokens?: unknown;
  period?: unknown;
  rpm?: unknown;
  tpm?: unknown;
}

export type ParsedRule = { ok: true; budget?: BudgetRule; limit?: LimitRule } | { ok: false; problems: string[] };

const RULE_FIELDS = new Set(['scope', 'id', 'usd', 'tokens', 'period', 'rpm', 'tpm']);
/** Ten million dollars: far above any real budget, far below where micro-dollars stop being exact. */
const MAX_USD = 10_000_000;

/** How problems name the rule and its fields where the input came from: YAML keys, body fields or CLI options. */
export interface RuleNames {
  rule: string;
  field(field: string): string;
}

export const BODY_NAMES: RuleNames = { rule: 'body', field: (field) => field };

/**
 * Checks one rule, so that every problem names what to fix. A rule may carry a budget (usd and/or tokens with
 * a period), rate limits (rpm and/or tpm), or both.
 */
export function parseRule(input: unknown, names: RuleNames = BODY_NAMES): ParsedRule {
  const name = names.field;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, problems: [`${names.rule}: must be an object`] };
  const rule = input as RuleInput;
  const problems: string[] = [];
  for (const field of Object.keys(rule)) if (!RULE_FIELDS.has(field)) problems.push(`${name(field)}: unknown field (expected scope, id, usd, tokens, period, rpm, tpm)`);
  if (!(SCOPE_KINDS as readonly unknown[]).includes(rule.scope)) problems.push(`${name('scope')}: must be one of ${SCOPE_KINDS.join(', ')}, got ${JSON.stringify(rule.scope)}`);
  if (typeof rule.id !== 'string' || rule.id.trim() === '' || rule.id.length > 256) problems.push(`${name('id')}: must be a caller id (1 to 256 characters) or *`);
  else if (rule.scope === 'subject') {
    const problem = subjectIdProblem(rule.id.trim());
    if (problem) problems.push(`${name('id')}: ${problem}`);
  }
  if (rule.usd !== undefined && !(typeof rule.usd === 'number' && Number.isFinite(rule.usd) && rule.usd >= 0 && rule.usd <= MAX_USD)) {
    problems.push(`${name('usd')}: must be a number of dollars from 0 to ${MAX_USD}, got ${JSON.stringify(rule.usd)}`);
  }
  for (const field of ['tokens', 'rpm', 'tpm'] as const) {
    const value = rule[field];
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)) problems.push(`${name(field)}: must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  const hasBudget = rule.usd !== undefined || rule.tokens !== undefined;
  if (rule.period !== undefined && !(BUDGET_PERIODS as readonly unknown[]).includes(rule.period)) problems.push(`${name('period')}: must be day or month, got ${JSON.stringify(rule.period)}`);
  else if (hasBudget && rule.period === undefined) problems.push(`${name('period')}: is required with usd or tokens (day or month)`);
  else if (!hasBudget && rule.period !== undefined) problems.push(`${name('period')}: applies to usd or tokens, and neither is set`);
  if (!hasBudget && rule.rpm === undefined && rule.tpm === undefined) problems.push(`${names.rule}: set ${['usd', 'tokens', 'rpm', 'tpm'].map(name).join(', ')} (one at least)`);
  if (problems.length) return { ok: false, problems };
  const scope = rule.scope as ScopeKind;
  const id = (rule.id as string).trim();
  return {
    ok: true,
    ...(hasBudget
      ? {
          budget: {
            scope,
            id,
            period: rule.period as BudgetPeriod,
            ...(rule.usd !== undefined ? { micros: Math.round((rule.usd as number) * MICROS_PER_USD) } : {}),
            ...(rule.tokens !== undefined ? { tokens: rule.tokens as number } : {}),
          },
        }
      : {}),
    ...(rule.rpm !== undefined || rule.tpm !== undefined
      ? { limit: { scope, id, ...(rule.rpm !== undefined ? { rpm: rule.rpm as number } : {}), ...(rule.tpm !== undefined ? { tpm: rule.tpm as number } : {}) } }
      : {}),
  };
}

/** A budget rule as the admin API and the CLI show it: dollars, not micro-dollars. */
export function describeBudget(rule: BudgetRule) {
  return {
    scope: rule.scope,
    id: rule.id,
    period: rule.period,
    ...(rule.micros !== undefined ? { usd: rule.micros / MICROS_PER_USD } : {}),
    ...(rule.tokens !== undefined ? { tokens: rule.tokens } : {}),
  };
}
