import { TollgateError } from '../common/errors';
import { missingDatabaseProblem } from '../governance/ledger/postgres-ledger-store';
import { createProvider } from '../ai/providers/provider-factory';
import { ToolRegistry } from '../ai/tools/tool-registry';
import { authStartupProblems } from './auth-config.mapper';
import { ConfigError } from './config.error';
import type { TollgateConfig } from './config.types';

/**
 * The rules the server's modules apply when they start, run before Nest builds them: AuthModule's option
 * resolution on the options the server mounts (serverAuthModuleOptions) and each provider adapter's
 * constructor, the same code in both places, not a copy of its rules. `tollgate config
 * validate`, `npm start` and `tollgate serve` run it, so a file that validates starts, and one that would not is
 * reported as `<source>: <key>: <message>` lines in a ConfigError instead of a stack trace from inside Nest.
 */
export async function checkServerStart(config: TollgateConfig, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const problems = [...authStartupProblems(config, env), ...(await providerStartupProblems(config)), ...(await searchToolProblems(config))];
  if (problems.length) throw new ConfigError(problems);
}

/**
 * What only a connection can tell, for the server's start (`npm start`, `tollgate serve`); `tollgate config
 * validate` reads files and connects to nothing. A PostgreSQL ledger or response store whose database does not
 * exist is refused, naming the database and its server without the password; a server that does not answer yet
 * is not (the ledger's writes retry, the response store creates its tables on first use).
 */
export async function checkServerStores(config: TollgateConfig): Promise<void> {
  const databases: Array<[key: string, url: string]> = [];
  const { enabled, store } = config.ledger;
  if (enabled && store.kind === 'postgres') databases.push(['governance.ledger.url', store.url]);
  const responses = config.ai.responses;
  if (responses.store === 'postgres' && responses.url !== undefined) databases.push(['ai.responses.url', responses.url]);
  const problems: string[] = [];
  for (const [key, url] of databases) {
    const problem = await missingDatabaseProblem(url);
    if (problem) problems.push(`${config.file ?? 'configuration'}: ${key}: ${problem}`);
  }
  if (problems.length) throw new ConfigError(problems);
}

/**
 * The search tools built as SearchService builds them (their URL rules included). Only what uses search runs
 * it: the server, `tollgate search`, `agent` and `mcp`; `tollgate vector install` never fails on a search setting.
 */
export async function checkSearchTools(config: TollgateConfig): Promise<void> {
  const problems = await searchToolProblems(config);
  if (problems.length) throw new ConfigError(problems);
}

async function searchToolProblems(config: TollgateConfig): Promise<string[]> {
  try {
    // Building a tool opens no socket before its first search.
    await ToolRegistry.fromSettings(config.ai.search.tools).close();
    return [];
  } catch (error) {
    if (!(error instanceof TollgateError)) throw error;
    return [`${config.file ?? 'configuration'}: ${error.message}`];
  }
}

async function providerStartupProblems(config: TollgateConfig): Promise<string[]> {
  const problems: string[] = [];
  for (const settings of config.ai.providers) {
    try {
      // Built as AiModule builds it; its connection pool opens no socket before the first call.
      await createProvider(settings).close();
    } catch (error) {
      if (!(error instanceof TollgateError)) throw error;
      const message = error.message.startsWith(`${settings.name}: `) ? error.message.slice(settings.name.length + 2) : error.message;
      problems.push(`${config.file ?? 'configuration'}: providers.${settings.name}: ${message}`);
    }
  }
  return problems;
}
