import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import type { TollgateConfig } from '../config/config.types';
import { KeyNotFoundError } from '../governance/governance-errors';
import { type ApiKeyRecord, type KeySpec, cliFieldLabel, publicKeyView } from '../governance/keys/api-key-record';
import type { KeyStoreSettings } from '../governance/keys/key-store';
import { createKeyStore } from '../governance/keys/key-store.factory';
import { KeySpecError, KeysService } from '../governance/keys/keys.service';
import { writeJson } from './ai-command.base';
import { OperationError, UsageError } from './cli.errors';
import { CliConfigService } from './cli-config.service';
import { keysTable } from './keys-table';

type OutputFormat = 'table' | 'json';

interface KeyOptions {
  tenant?: string;
  subTenant?: string;
  name?: string;
  models?: string[];
  budgetUsd?: unknown;
  budgetTokens?: unknown;
  period?: string;
  rpm?: unknown;
  tpm?: unknown;
  expires?: string;
  clear?: string[];
  format?: OutputFormat;
}

const CLEARABLE: Record<string, keyof KeySpec> = { name: 'name', models: 'models', budget: 'budgetUsd', rpm: 'rpm', tpm: 'tpm', expires: 'expires' };

/** A memory store lives and dies with this process: a key created in it would be lost at exit. */
function storeSettings(config: TollgateConfig): KeyStoreSettings {
  const store = config.governance.keys;
  if (store.kind === 'memory') {
    const where = config.file ?? 'config/tollgate.yaml (none found; pass --config PATH)';
    throw new OperationError([
      `governance.keys.store is memory: keys managed by the CLI would vanish when it exits. Set governance.keys.store to redis or postgres (with governance.keys.url) in ${where}`,
    ]);
  }
  return store;
}

/** Driver messages can carry connection URLs: credentials are masked before anything is printed. */
function storeFailure(kind: string, error: unknown): OperationError {
  const { code, message } = error as { code?: string; message?: string };
  const reason = (message || code || 'unknown error').replace(/\/\/[^/@\s]*@/g, '//***@');
  return new OperationError([`cannot reach the ${kind} key store: ${reason}`]);
}

/** Numbers as numbers; anything else is passed on as typed, for validateKeySpec to name in its message. */
function numeric(value: string): unknown {
  return /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
}

function parseFormat(value: string): OutputFormat {
  if (value !== 'table' && value !== 'json') throw new UsageError(`--format must be table or json (got "${value}")`);
  return value;
}

function specOf(options: KeyOptions): KeySpec {
  const spec: KeySpec = {
    tenant: options.tenant,
    subTenant: options.subTenant,
    name: options.name,
    models: options.models,
    budgetUsd: options.budgetUsd,
    budgetTokens: options.budgetTokens,
    period: options.period,
    rpm: options.rpm,
    tpm: options.tpm,
    expires: options.expires,
  };
  for (const setting of options.clear ?? []) {
    const field = CLEARABLE[setting];
    if (field === undefined) throw new UsageError(`--clear takes ${Object.keys(CLEARABLE).join(', ')} (got "${setting}")`);
    if (spec[field] !== undefined) throw new UsageError(`--clear ${setting} cannot be combined with a new value for it`);
    spec[field] = null;
  }
  return spec;
}

/** The key options of `create` and `update`; each command declares the ones it takes. */
abstract class KeysSubCommand extends CommandRunner {
  // Explicit: the concrete sub-commands inherit this constructor, and with it this injection.
  constructor(@Inject(CliConfigService) protected readonly configs: CliConfigService) {
    super();
  }

  protected async withKeys<T>(use: (keys: KeysService) => Promise<T>): Promise<T> {
    const settings = storeSettings(this.configs.load(this.command));
    const store = createKeyStore(settings);
    try {
      return await use(new KeysService(store));
    } catch (error) {
      if (error instanceof KeySpecError) throw new UsageError(error.problems.join('; '));
      if (error instanceof KeyNotFoundError) throw new OperationError([error.message]);
      if (error instanceof UsageError || error instanceof OperationError) throw error;
      throw storeFailure(settings.kind, error);
    } finally {
      await store.close().catch(() => undefined);
    }
  }

  protected print(records: ApiKeyRecord[], format: OutputFormat | undefined, single: boolean, extra: Record<string, unknown> = {}): void {
    const now = Date.now();
    const views = records.map((record) => publicKeyView(record, now));
    if (format === 'json') writeJson(single ? { ...extra, ...views[0] } : { keys: views });
    else process.stdout.write(keysTable(views));
  }

  @Option({ flags: '--format <format>', description: 'table (default) or json' })
  parseFormat(value: string): OutputFormat {
    return parseFormat(value);
  }
}

abstract class KeySettingsCommand extends KeysSubCommand {
  @Option({ flags: '--name <name>', description: 'a label for the key' })
  parseName(value: string): string {
    return value;
  }

  @Option({ flags: '--models <globs>', description: "comma-separated provider/model globs, e.g. 'openai/*,anthropic/claude-*'" })
  parseModels(value: string): string[] {
    return value.split(',').map((glob) => glob.trim()).filter((glob) => glob !== '');
  }

  @Option({ flags: '--budget-usd <dollars>', description: 'budget in dollars per --period' })
  parseBudgetUsd(value: string): unknown {
    return numeric(value);
  }

  @Option({ flags: '--budget-tokens <tokens>', description: 'budget in tokens per --period' })
  parseBudgetTokens(value: string): unknown {
    return numeric(value);
  }

  @Option({ flags: '--period <period>', description: 'day or month (UTC calendar windows)' })
  parsePeriod(value: string): string {
    return value;
  }

  @Option({ flags: '--rpm <n>', description: 'requests per minute' })
  parseRpm(value: string): unknown {
    return numeric(value);
  }

  @Option({ flags: '--tpm <n>', description: 'tokens per minute' })
  parseTpm(value: string): unknown {
    return numeric(value);
  }

  @Option({ flags: '--expires <duration>', description: 'lifetime from now: 30d, 12h, 90m, 2w or 45s' })
  parseExpires(value: string): string {
    return value;
  }
}

@SubCommand({ name: 'create', description: 'Create a key for --tenant and print it once (only its SHA-256 is stored)' })
export class KeysCreateCommand extends KeySettingsCommand {
  @Option({ flags: '--tenant <id>', description: 'the tenant the key acts for (required)' })
  parseTenant(value: string): string {
    return value;
  }

  @Option({ flags: '--sub-tenant <slug>', description: 'the sub-tenant the key acts for' })
  parseSubTenant(value: string): string {
    return value;
  }

  async run(_params: string[], options: KeyOptions = {}): Promise<void> {
    const { key, record } = await this.withKeys((keys) => keys.create(specOf(options), cliFieldLabel));
    if (options.format === 'json') return this.print([record], 'json', true, { key });
    process.stdout.write(`${key}\n`);
    process.stderr.write(`key ${record.id} created for tenant ${record.tenant}; the key above is shown this once and cannot be recovered\n`);
  }
}

@SubCommand({ name: 'list', description: 'List keys (never the keys themselves), optionally of one --tenant' })
export class KeysListCommand extends KeysSubCommand {
  @Option({ flags: '--tenant <id>', description: 'only this tenant’s keys' })
  parseTenant(value: string): string {
    return value;
  }

  async run(_params: string[], options: KeyOptions = {}): Promise<void> {
    const records = await this.withKeys((keys) => keys.list(options.tenant === undefined ? {} : { tenant: options.tenant }));
    this.print(records, options.format, false);
  }
}

@SubCommand({ name: 'show', arguments: '<id>', description: 'Show one key’s settings and status' })
export class KeysShowCommand extends KeysSubCommand {
  async run([id]: string[], options: KeyOptions = {}): Promise<void> {
    this.print([await this.withKeys((keys) => keys.get(id))], options.format, true);
  }
}

@SubCommand({ name: 'revoke', arguments: '<id>', description: 'Revoke a key: every server refuses it within a second' })
export class KeysRevokeCommand extends KeysSubCommand {
  async run([id]: string[], options: KeyOptions = {}): Promise<void> {
    this.print([await this.withKeys((keys) => keys.revoke(id))], options.format, true);
  }
}

@SubCommand({ name: 'update', arguments: '<id>', description: 'Change a key’s settings (tenant and sub-tenant are fixed)' })
export class KeysUpdateCommand extends KeySettingsCommand {
  @Option({ flags: '--clear <settings>', description: `comma-separated settings to remove: ${Object.keys(CLEARABLE).join(', ')}` })
  parseClear(value: string): string[] {
    return value.split(',').map((setting) => setting.trim()).filter((setting) => setting !== '');
  }

  async run([id]: string[], options: KeyOptions = {}): Promise<void> {
    const spec = specOf(options);
    if (Object.values(spec).every((value) => value === undefined)) throw new UsageError('update: nothing to change (give a setting option or --clear)');
    this.print([await this.withKeys((keys) => keys.update(id, spec, cliFieldLabel))], options.format, true);
  }
}

@Command({
  name: 'keys',
  description: 'Create, list, show, update or revoke API keys in the configured governance.keys store',
  subCommands: [KeysCreateCommand, KeysListCommand, KeysShowCommand, KeysRevokeCommand, KeysUpdateCommand],
})
export class KeysCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp({ error: true });
    throw new UsageError('keys: missing subcommand (create, list, show, revoke, update)');
  }
}
