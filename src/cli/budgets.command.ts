import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import type { TollgateConfig } from '../config/config.types';
import { type BudgetRuleStore, RedisBudgetRuleStore } from '../governance/budgets/budget-rule-store';
import { type BudgetRule, type LimitRule, type RuleSet, describeBudget, parseRule } from '../governance/budgets/budget-rules';
import { BUDGET_PERIODS, type BudgetPeriod, SCOPE_KINDS, type ScopeKind } from '../governance/budgets/budget-scope';
import type { BudgetsSettings } from '../governance/budgets/budgets-settings';
import { OperationError, UsageError } from './cli.errors';
import { CliConfigService } from './cli-config.service';

interface RuleOptions {
  scope?: string;
  id?: string;
  usd?: number;
  tokens?: number;
  period?: string;
  rpm?: number;
  tpm?: number;
  json?: boolean;
}

const CLI_NAMES = { rule: 'budgets set', field: (field: string) => `--${field}` };

/** A memory store lives and dies with this process: a rule set by the CLI would be lost at exit. */
function redisSettings(config: TollgateConfig): BudgetsSettings & { store: { kind: 'redis' } } {
  const settings = config.budgets;
  if (settings.store.kind !== 'redis') {
    const where = config.file ?? 'config/tollgate.yaml (none found; pass --config PATH)';
    throw new OperationError([
      `governance.budgets.store is memory: a rule set by the CLI would vanish when it exits. Set governance.budgets.store to redis (with url) in ${where}`,
    ]);
  }
  return settings as BudgetsSettings & { store: { kind: 'redis' } };
}

/** Driver messages can carry connection URLs: credentials are masked before anything is printed. */
async function withRuleStore<T>(config: TollgateConfig, action: string, use: (store: BudgetRuleStore) => Promise<T>): Promise<T> {
  const settings = redisSettings(config);
  const store = new RedisBudgetRuleStore(settings.store.url, settings.store.keyPrefix, settings.refreshMs);
  try {
    return await use(store);
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    const reason = (message || code || 'unknown error').replace(/\/\/[^/@\s]*@/g, '//***@');
    throw new OperationError([`cannot ${action} the budget rules in Redis: ${reason}`]);
  } finally {
    await store.close();
  }
}

function count(value: string, flag: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(parsed) || parsed < 0) throw new UsageError(`${flag} must be a non-negative integer (got "${value}")`);
  return parsed;
}

function scopeOption(value: string): string {
  if (!(SCOPE_KINDS as readonly string[]).includes(value)) throw new UsageError(`--scope must be one of ${SCOPE_KINDS.join(', ')} (got "${value}")`);
  return value;
}

function periodOption(value: string): string {
  if (!(BUDGET_PERIODS as readonly string[]).includes(value)) throw new UsageError(`--period must be day or month (got "${value}")`);
  return value;
}

function requireScopeAndId(options: RuleOptions, command: string): { scope: ScopeKind; id: string } {
  const missing = (['scope', 'id'] as const).filter((name) => options[name] === undefined).map((name) => `--${name}`);
  if (missing.length) throw new UsageError(`budgets ${command}: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required`);
  return { scope: options.scope as ScopeKind, id: options.id! };
}

abstract class ScopedCommand extends CommandRunner {
  @Option({ flags: '--scope <scope>', description: `${SCOPE_KINDS.join(', ')}` })
  parseScope(value: string): string {
    return scopeOption(value);
  }

  @Option({ flags: '--id <id>', description: 'the caller id (sub_tenant: TENANT/SLUG), or * for every caller of the scope' })
  parseId(value: string): string {
    return value;
  }

  @Option({ flags: '--period <period>', description: 'day or month (UTC)' })
  parsePeriod(value: string): string {
    return periodOption(value);
  }
}

@SubCommand({ name: 'set', description: 'Set the budget (--usd and/or --tokens per --period) and/or --rpm/--tpm of one scope, without a restart' })
export class BudgetsSetCommand extends ScopedCommand {
  constructor(private readonly configs: CliConfigService) {
    super();
  }

  @Option({ flags: '--usd <dollars>', description: 'dollars per period' })
  parseUsd(value: string): number {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0) throw new UsageError(`--usd must be a non-negative number of dollars (got "${value}")`);
    return parsed;
  }

  @Option({ flags: '--tokens <n>', description: 'tokens per period' })
  parseTokens(value: string): number {
    return count(value, '--tokens');
  }

  @Option({ flags: '--rpm <n>', description: 'model calls per minute' })
  parseRpm(value: string): number {
    return count(value, '--rpm');
  }

  @Option({ flags: '--tpm <n>', description: 'tokens per minute' })
  parseTpm(value: string): number {
    return count(value, '--tpm');
  }

  async run(_params: string[], options: RuleOptions = {}): Promise<void> {
    requireScopeAndId(options, 'set');
    const input = Object.fromEntries(
      (['scope', 'id', 'usd', 'tokens', 'period', 'rpm', 'tpm'] as const).filter((name) => options[name] !== undefined).map((name) => [name, options[name]]),
    );
    const parsed = parseRule(input, CLI_NAMES);
    if (!parsed.ok) throw new UsageError(parsed.problems.join('; '));
    const config = this.configs.load(this.command);
    await withRuleStore(config, 'write', (store) => store.put({ budget: parsed.budget, limit: parsed.limit }));
    for (const line of describeRules({ budgets: parsed.budget ? [parsed.budget] : [], limits: parsed.limit ? [parsed.limit] : [] })) {
      process.stdout.write(`set ${line}\n`);
    }
  }
}

@SubCommand({ name: 'list', description: 'Print the configured and the run-time budgets and rate limits' })
export class BudgetsListCommand extends CommandRunner {
  constructor(private readonly configs: CliConfigService) {
    super();
  }

  @Option({ flags: '--json', description: 'print JSON instead of lines' })
  parseJson(): boolean {
    return true;
  }

  async run(_params: string[], options: RuleOptions = {}): Promise<void> {
    const config = this.configs.load(this.command);
    const runtime = await withRuleStore(config, 'read', (store) => store.load());
    const configured = config.budgets.rules;
    if (options.json) {
      const shown = (rules: RuleSet) => ({ budgets: rules.budgets.map(describeBudget), limits: rules.limits });
      process.stdout.write(`${JSON.stringify({ configured: shown(configured), runtime: shown(runtime) }, null, 2)}\n`);
      return;
    }
    const lines = [...describeRules(runtime).map((line) => `runtime     ${line}`), ...describeRules(configured).map((line) => `configured  ${line}`)];
    process.stdout.write(lines.length ? `${lines.join('\n')}\n` : 'no budgets or rate limits\n');
  }
}

@SubCommand({ name: 'delete', description: 'Delete the run-time budget of one --period, or every run-time rule of --scope and --id' })
export class BudgetsDeleteCommand extends ScopedCommand {
  constructor(private readonly configs: CliConfigService) {
    super();
  }

  async run(_params: string[], options: RuleOptions = {}): Promise<void> {
    const { scope, id } = requireScopeAndId(options, 'delete');
    const config = this.configs.load(this.command);
    const removed = await withRuleStore(config, 'delete', (store) => store.remove(scope, id, options.period as BudgetPeriod | undefined));
    if (removed === 0) throw new OperationError([`no run-time rule of ${scope} ${id}${options.period ? ` for period ${options.period}` : ''}`]);
    process.stdout.write(`deleted ${removed} rule(s) of ${scope} ${id}\n`);
  }
}

/** One line per rule: `tenant t-1  month  usd 5  tokens 1000` or `key k-1  rpm 60  tpm 10000`. */
function describeRules(rules: RuleSet): string[] {
  const budget = (rule: BudgetRule) => {
    const shown = describeBudget(rule);
    return [`${rule.scope} ${rule.id}`, rule.period, shown.usd !== undefined ? `usd ${shown.usd}` : '', shown.tokens !== undefined ? `tokens ${shown.tokens}` : ''];
  };
  const limit = (rule: LimitRule) => [`${rule.scope} ${rule.id}`, rule.rpm !== undefined ? `rpm ${rule.rpm}` : '', rule.tpm !== undefined ? `tpm ${rule.tpm}` : ''];
  return [...rules.budgets.map(budget), ...rules.limits.map(limit)].map((parts) => parts.filter(Boolean).join('  '));
}

@Command({
  name: 'budgets',
  description: 'Set, list or delete budgets and rate limits at run time in the configured Redis store (governance.budgets)',
  subCommands: [BudgetsSetCommand, BudgetsListCommand, BudgetsDeleteCommand],
})
export class BudgetsCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp({ error: true });
    throw new UsageError('budgets: missing subcommand (set, list, delete)');
  }
}
