import { readFile } from 'node:fs/promises';
import { Command, CommandRunner, SubCommand } from 'nest-commander';
import { DEFAULT_RBAC_RECORD_KEY } from '../auth/auth.constants';
import { serializeRbacRecord } from '../auth/rbac/rbac-record';
import { RbacService } from '../auth/rbac/rbac.service';
import { RbacRecordTooLargeError } from '../auth/rbac/record-size';
import type { AuthSettings, TollgateConfig } from '../config/config.types';
import { OperationError, UsageError } from './cli.errors';
import { CliConfigService } from './cli-config.service';
import { parseRbacRecordFile } from './rbac-record-file';

/**
 * The RBAC store of the configuration. A memory store lives and dies with this process, so a record
 * loaded into it would be lost at exit: refuse it with a message that says what to configure.
 */
function storeSettings(config: TollgateConfig): AuthSettings {
  const auth = config.auth ?? {};
  const store = auth.rbacCacheStore;
  if (store === undefined || store === 'memory') {
    const where = config.file ?? 'config/tollgate.yaml (none found; pass --config PATH)';
    throw new OperationError([
      `auth.rbac_cache_store is ${store === undefined ? 'not set' : 'memory'}: a record loaded by the CLI would vanish when it exits. ` +
        `Set auth.rbac_cache_store to redis, memcached or postgres (with rbac_cache_store_options) in ${where}`,
    ]);
  }
  return auth;
}

/** Driver messages can carry connection URLs: credentials are masked before anything is printed. */
function storeFailure(kind: unknown, action: string, error: unknown): OperationError {
  const { code, message } = error as { code?: string; message?: string };
  const reason = (message || code || 'unknown error').replace(/\/\/[^/@\s]*@/g, '//***@');
  return new OperationError([`cannot ${action} the ${String(kind)} RBAC store: ${reason}`]);
}

async function withRbacService<T>(auth: AuthSettings, action: string, use: (rbac: RbacService) => Promise<T>): Promise<T> {
  let rbac: RbacService | undefined;
  try {
    rbac = RbacService.create({
      rbacCacheStore: auth.rbacCacheStore,
      rbacCacheStoreOptions: auth.rbacCacheStoreOptions,
      permissionsCacheStore: auth.permissionsCacheStore,
      permissionsCacheStoreOptions: auth.permissionsCacheStoreOptions,
      rbacRecordKey: auth.rbacRecordKey,
      cachedPermissionsTtl: auth.cachedPermissionsTtl,
      rbacRecordMaxBytes: auth.rbacRecordMaxBytes,
    });
    return await use(rbac);
  } catch (error) {
    if (error instanceof OperationError) throw error;
    if (error instanceof RbacRecordTooLargeError) throw new OperationError([error.message]);
    throw storeFailure(auth.rbacCacheStore, action, error);
  } finally {
    await rbac?.close().catch(() => undefined);
  }
}

@SubCommand({
  name: 'load',
  arguments: '<file>',
  description: 'Validate FILE.json ({"last_update": ..., "permissions": {"<role>": ["<resource>:<method>", ...]}}) and store it',
})
export class RbacLoadCommand extends CommandRunner {
  constructor(private readonly configs: CliConfigService) {
    super();
  }

  async run([file]: string[]): Promise<void> {
    const auth = storeSettings(this.configs.load(this.command));
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new OperationError([`${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
    }
    const parsed = parseRbacRecordFile(text, file, Math.floor(Date.now() / 1000));
    if (!parsed.ok) throw new OperationError(parsed.problems);

    const result = await withRbacService(auth, 'write to', (rbac) => rbac.setRecord(parsed.record));
    process.stdout.write(
      `loaded ${result.roles} role(s) with ${result.permissions} permission(s) into the ${String(auth.rbacCacheStore)} store ` +
        `(key ${auth.rbacRecordKey ?? DEFAULT_RBAC_RECORD_KEY}, last_update ${result.lastUpdate}); cached permissions cleared\n`,
    );
  }
}

@SubCommand({ name: 'show', description: 'Print the stored RBAC record as JSON' })
export class RbacShowCommand extends CommandRunner {
  constructor(private readonly configs: CliConfigService) {
    super();
  }

  async run(): Promise<void> {
    const auth = storeSettings(this.configs.load(this.command));
    const record = await withRbacService(auth, 'read', (rbac) => rbac.getRecord());
    if (record === undefined || record === null) {
      throw new OperationError([
        `no RBAC record under key ${auth.rbacRecordKey ?? DEFAULT_RBAC_RECORD_KEY} in the ${String(auth.rbacCacheStore)} store (load one with: tollgate rbac load FILE.json)`,
      ]);
    }
    process.stdout.write(`${JSON.stringify(serializeRbacRecord(record), null, 2)}\n`);
  }
}

@Command({
  name: 'rbac',
  description: 'Load or show the RBAC permission record in the configured rbac_cache_store',
  subCommands: [RbacLoadCommand, RbacShowCommand],
})
export class RbacCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp({ error: true });
    throw new UsageError('rbac: missing subcommand (load, show)');
  }
}
