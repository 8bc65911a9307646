import { randomUUID } from 'node:crypto';
import { Command, Option } from 'nest-commander';
import { createAgentService, createAuditSink } from '../ai/agent/agent.providers';
import type { AgentResult } from '../ai/agent/agent.service';
import { snakeCaseKeys } from '../ai/http/api-response';
import { SearchService } from '../ai/tools/search.service';
import { AiCommand, type AiCommandOptions, inputText, writeJson } from './ai-command.base';
import { OperationError, UsageError } from './cli.errors';
import { localUser } from './local-user';
import { toCliError } from './cli-input-errors';
import { checkSearchTools } from '../config/server-start-checks';

interface AgentCommandOptions extends AiCommandOptions {
  tool?: string[];
  maxLoops?: number;
}

/**
 * `tollgate agent [TEXT] --tool NAME... --max-loops N`: the same agent as POST /v1/agent. Without --tool
 * the model must answer directly. A run stopped by the loop limit prints what it did and exits 1.
 */
@Command({
  name: 'agent',
  arguments: '[text]',
  description: 'Run TEXT (or stdin) as a task through the bounded tool-calling agent',
})
export class AgentCommand extends AiCommand {
  @Option({ flags: '--tool <name>', description: 'allow this tool (repeatable; default: none, the model answers directly)' })
  parseTool(value: string, previous: string[] = []): string[] {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) throw new UsageError(`--tool must be a tool name (letters, digits, "_" or "-"; got "${value}")`);
    return [...previous, value];
  }

  @Option({ flags: '--max-loops <n>', description: 'most model turns (default and maximum: agent.max_loops)' })
  parseMaxLoops(value: string): number {
    if (!/^\d{1,3}$/.test(value) || Number(value) < 1) throw new UsageError(`--max-loops must be a positive integer (got "${value}")`);
    return Number(value);
  }

  async run([argument]: string[], options: AgentCommandOptions = {}): Promise<void> {
    const task = await inputText(argument, 'agent');
    const config = this.configs.load(this.command);
    await checkSearchTools(config);
    const { ai } = config;
    await this.withClient(options, async (client, provider) => {
      const search = SearchService.fromOptions(ai.search, client);
      const sink = createAuditSink(ai);
      try {
        const agent = createAgentService(ai, client, search, sink);
        const result = await agent.run(task, {
          tools: options.tool ?? [],
          provider,
          model: options.model,
          maxLoops: options.maxLoops,
          context: { requestId: `cli-${randomUUID()}`, principal: localUser() },
        });
        if (options.format === 'json') writeJson(snakeCaseKeys({ ...result }));
        else process.stdout.write(result.success ? `${result.response.replace(/\n?$/, '\n')}` : describeActions(result));
        if (!result.success) throw new OperationError([`agent: stopped at the loop limit (${result.loopsRun} loops) without an answer`]);
      } catch (error) {
        throw toCliError(error);
      } finally {
        await Promise.all([search.close(), sink?.close()]);
      }
    });
  }
}

function describeActions(result: AgentResult): string {
  return result.actions.map((a) => `loop ${a.loop}: ${a.tool} ${a.outcome}${a.error ? ` (${a.error})` : ''}\n`).join('');
}
