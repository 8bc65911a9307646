import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import type { BudgetPeriod, ScopeKind } from './budget-scope';
import { type BudgetRule, deadSubjectRuleIds, type LimitRule, type RuleSet } from './budget-rules';

/**
 * Rules set at run time (`tollgate budgets`, /v1/admin/budgets), on top of the configured ones: no restart.
 * One budget per (scope, id, period) and one rate rule per (scope, id); setting one replaces it.
 */
export interface BudgetRuleStore {
  /** The rules as last read: synchronous, for the request path. */
  current(): RuleSet;
  /** Reads the store now (and refreshes `current`). */
  load(): Promise<RuleSet>;
  put(rules: { budget?: BudgetRule; limit?: LimitRule }): Promise<void>;
  /** Removes the budget of one period, or every rule of the scope and id without a period; answers how many went. */
  remove(scope: ScopeKind, id: string, period?: BudgetPeriod): Promise<number>;
  close(): Promise<void>;
}

const budgetField = (scope: ScopeKind, id: string, period: BudgetPeriod) => JSON.stringify(['budget', scope, id, period]);
const limitField = (scope: ScopeKind, id: string) => JSON.stringify(['limit', scope, id]);

function fieldsOf(rules: { budget?: BudgetRule; limit?: LimitRule }): [string, string][] {
  const fields: [string, string][] = [];
  if (rules.budget) fields.push([budgetField(rules.budget.scope, rules.budget.id, rules.budget.period), JSON.stringify(rules.budget)]);
  if (rules.limit) fields.push([limitField(rules.limit.scope, rules.limit.id), JSON.stringify(rules.limit)]);
  return fields;
}

function removedFields(scope: ScopeKind, id: string, period?: BudgetPeriod): string[] {
  return period ? [budgetField(scope, id, period)] : [budgetField(scope, id, 'day'), budgetField(scope, id, 'month'), limitField(scope, id)];
}

/** Field -> rule JSON, as both stores hold them; a value that does not parse is skipped (never written by Tollgate). */
function toRuleSet(entries: Iterable<[string, string]>): RuleSet {
  const set: RuleSet = { budgets: [], limits: [] };
  for (const [field, value] of entries) {
    try {
      const kind = (JSON.parse(field) as string[])[0];
      if (kind === 'budget') set.budgets.push(JSON.parse(value) as BudgetRule);
      else if (kind === 'limit') set.limits.push(JSON.parse(value) as LimitRule);
    } catch {
      continue;
    }
  }
  return set;
}

export class MemoryBudgetRuleStore implements BudgetRuleStore {
  private readonly rules = new Map<string, string>();
  private snapshot: RuleSet = { budgets: [], limits: [] };

  current(): RuleSet {
    return this.snapshot;
  }

  async load(): Promise<RuleSet> {
    return this.snapshot;
  }

  async put(rules: { budget?: BudgetRule; limit?: LimitRule }): Promise<void> {
    for (const [field, value] of fieldsOf(rules)) this.rules.set(field, value);
    this.snapshot = toRuleSet(this.rules);
  }

  async remove(scope: ScopeKind, id: string, period?: BudgetPeriod): Promise<number> {
    const removed = removedFields(scope, id, period).filter((field) => this.rules.delete(field)).length;
    this.snapshot = toRuleSet(this.rules);
    return removed;
  }

  async close(): Promise<void> {}
}

/**
 * Rules in one Redis hash (`<prefix>rules`), re-read every `refreshMs` by each process, so a change reaches
 * every process within that time. While Redis is unreachable the last rules read stay in force.
 */
export class RedisBudgetRuleStore implements BudgetRuleStore {
  private readonly logger = new Logger('Budgets');
  private readonly redis: Redis;
  private readonly key: string;
  private snapshot: RuleSet = { budgets: [], limits: [] };
  private timer?: NodeJS.Timeout;
  private failing = false;
  /** Dead subject rule ids already logged, so each is logged once per process. */
  private readonly loggedDead = new Set<string>();

  constructor(url: string, keyPrefix: string, private readonly refreshMs: number) {
    this.key = `${keyPrefix}rules`;
    // Required here: a configuration without Redis loads no Redis client (decision C13).
    const { default: RedisClient } = require('ioredis') as typeof import('ioredis');
    this.redis = new RedisClient(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000, disconnectTimeout: 200 });
    this.redis.on('error', () => undefined);
  }

  /** Reads the rules once (a failure is logged; the process starts with none) and keeps them fresh. */
  async start(): Promise<void> {
    await this.load().catch(() => undefined);
    this.timer = setInterval(() => void this.load().catch(() => undefined), this.refreshMs).unref();
  }

  current(): RuleSet {
    return this.snapshot;
  }

  async load(): Promise<RuleSet> {
    try {
      this.snapshot = toRuleSet(Object.entries(await this.redis.hgetall(this.key)));
      this.logDeadSubjectRules(this.snapshot);
      if (this.failing) this.logger.log('budget rule store answers again');
      this.failing = false;
      return this.snapshot;
    } catch (error) {
      if (!this.failing) this.logger.error(`budget rule store unavailable (${error instanceof Error ? error.name : typeof error}); the rules last read stay in force`);
      this.failing = true;
      throw error;
    }
  }

  private logDeadSubjectRules(rules: RuleSet): void {
    for (const id of deadSubjectRuleIds(rules)) {
      if (this.loggedDead.has(id)) continue;
      this.loggedDead.add(id);
      this.logger.warn(
        `run-time subject rule ${JSON.stringify(id)} binds no caller: subjects are named <tenant>/<user>, key:<key id> or api-token since D7; set it anew and delete it (tollgate budgets delete --scope subject --id ${JSON.stringify(id)})`,
      );
    }
  }

  async put(rules: { budget?: BudgetRule; limit?: LimitRule }): Promise<void> {
    await this.redis.hset(this.key, Object.fromEntries(fieldsOf(rules)));
    await this.load();
  }

  async remove(scope: ScopeKind, id: string, period?: BudgetPeriod): Promise<number> {
    const removed = await this.redis.hdel(this.key, ...removedFields(scope, id, period));
    await this.load();
    return removed;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.redis.disconnect();
  }
}
