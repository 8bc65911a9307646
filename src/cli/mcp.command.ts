import { randomUUID } from 'node:crypto';
import { Command, Option } from 'nest-commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createAgentService, createAuditSink } from '../ai/agent/agent.providers';
import { createMcpServer } from '../ai/mcp/mcp-tools';
import { SearchService } from '../ai/tools/search.service';
import { packageVersion } from '../common/packaged-files';
import { AiCommand, type AiCommandOptions } from './ai-command.base';
import { UsageError } from './cli.errors';
import { localUser } from './local-user';
import { checkSearchTools } from '../config/server-start-checks';

interface McpCommandOptions extends AiCommandOptions {
  stdio?: boolean;
}

/**
 * `tollgate mcp --stdio`: the MCP server over newline-delimited JSON-RPC on stdin/stdout until stdin
 * closes. stdout carries protocol messages only; nothing else in the CLI writes there while it runs.
 * Streamable HTTP is served by the server itself (mcp.enabled).
 */
@Command({ name: 'mcp', description: 'Serve the MCP tools (generate, embed, search, providers, health, agent) over stdio' })
export class McpCommand extends AiCommand {
  @Option({ flags: '--stdio', description: 'speak newline-delimited JSON-RPC on stdin/stdout (required; HTTP is `tollgate serve` with mcp.enabled)' })
  parseStdio(): boolean {
    return true;
  }

  async run(_params: string[], options: McpCommandOptions = {}): Promise<void> {
    if (!options.stdio) throw new UsageError('mcp: --stdio is required (Streamable HTTP is served by `tollgate serve` with mcp.enabled: true)');
    const config = this.configs.load(this.command);
    await checkSearchTools(config);
    const { ai } = config;
    await this.withClient(options, async (client) => {
      const search = SearchService.fromOptions(ai.search, client);
      const sink = createAuditSink(ai);
      try {
        const agent = createAgentService(ai, client, search, sink);
        const principal = localUser();
        const server = createMcpServer({ client, search, agent, version: packageVersion() }, () => ({ requestId: `stdio-${randomUUID()}`, principal }));
        const transport = new StdioServerTransport(process.stdin, process.stdout);
        const closed = new Promise<void>((resolve) => {
          transport.onclose = () => resolve();
          process.stdin.once('end', () => resolve());
        });
        await server.connect(transport);
        await closed;
        await server.close();
      } finally {
        await Promise.all([search.close(), sink?.close()]);
      }
    });
  }
}
