import { Command, CommandRunner, Option } from 'nest-commander';
import { createLedgerStore } from '../governance/ledger/ledger.service';
import { checkRange, parseGroup, parseInstant, parseSince, type UsageGroup, type UsageQuery, UsageQueryError } from '../governance/ledger/usage-query';
import { CliConfigService } from './cli-config.service';
import { OperationError, UsageError } from './cli.errors';
import { USAGE_FORMATS, type UsageFormat, usageCsv, usageJson, usageTable } from './usage-report';

interface UsageOptions {
  since?: string;
  from?: string;
  to?: string;
  groupBy?: string;
  tenant?: string;
  format?: UsageFormat;
}

/**
 * `tollgate usage`: the durable ledger's sums, as GET /v1/usage answers them for the admin. Reads the
 * PostgreSQL store of the configuration; the memory store lives inside a server process, out of reach.
 */
@Command({ name: 'usage', description: 'Sum the ledger (tokens and cost) over a time range, grouped by tenant, sub_tenant, subject, key, provider, model or day' })
export class UsageCommand extends CommandRunner {
  constructor(private readonly configs: CliConfigService) {
    super();
  }

  @Option({ flags: '--since <duration>', description: 'how far back from now: 7d (default), 12h, 30m; or use --from' })
  parseSinceOption(value: string): string {
    return value;
  }

  @Option({ flags: '--from <time>', description: 'start, inclusive: YYYY-MM-DD, a date-time with an offset, or epoch milliseconds' })
  parseFromOption(value: string): string {
    return value;
  }

  @Option({ flags: '--to <time>', description: 'end, exclusive (default: now); same forms as --from' })
  parseToOption(value: string): string {
    return value;
  }

  @Option({ flags: '--group-by <group>', description: 'tenant, sub_tenant, subject, key, provider, model or day (default)' })
  parseGroupOption(value: string): string {
    return value;
  }

  @Option({ flags: '--tenant <id>', description: "only this tenant's calls" })
  parseTenantOption(value: string): string {
    if (value.trim() === '') throw new UsageError('--tenant must not be empty');
    return value;
  }

  @Option({ flags: '--format <format>', description: 'table (default), json or csv' })
  parseFormatOption(value: string): UsageFormat {
    if (!(USAGE_FORMATS as readonly string[]).includes(value)) throw new UsageError(`--format must be one of ${USAGE_FORMATS.join(', ')} (got "${value}")`);
    return value as UsageFormat;
  }

  async run(_params: string[], options: UsageOptions = {}): Promise<void> {
    const query = usageQuery(options, Date.now());
    const { ledger } = this.configs.load(this.command);
    if (ledger.store.kind !== 'postgres') {
      throw new OperationError([
        'governance.ledger.store is memory: that ledger lives inside the server process; ask the server (GET /v1/usage) or configure store postgres',
      ]);
    }
    const store = createLedgerStore(ledger);
    let rows;
    try {
      rows = await store.usage(query);
    } catch (error) {
      throw new OperationError([`cannot read the ledger from PostgreSQL (${(error as { code?: string })?.code ?? (error as Error)?.name ?? 'error'})`]);
    } finally {
      await store.close();
    }
    const format = options.format ?? 'table';
    if (format === 'json') process.stdout.write(usageJson(rows, query));
    else if (format === 'csv') process.stdout.write(usageCsv(rows, query.groupBy));
    else process.stdout.write(usageTable(rows, query.groupBy));
  }
}

/** The flags as a query; a bad value is a usage error naming its flag (exit 2). */
export function usageQuery(options: UsageOptions, now: number): UsageQuery & { groupBy: UsageGroup } {
  try {
    if (options.since !== undefined && options.from !== undefined) throw new UsageQueryError('--since', '--since and --from exclude each other');
    const to = options.to !== undefined ? parseInstant(options.to, '--to') : now;
    const from = options.from !== undefined ? parseInstant(options.from, '--from') : parseSince(options.since ?? '7d', '--since', to);
    checkRange(from, to, { from: options.from !== undefined ? '--from' : '--since', to: '--to' });
    return { from, to, groupBy: parseGroup(options.groupBy, '--group-by'), ...(options.tenant !== undefined ? { tenant: options.tenant } : {}) };
  } catch (error) {
    if (error instanceof UsageQueryError) throw new UsageError(error.message);
    throw error;
  }
}
