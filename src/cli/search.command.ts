import { Command, Option } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import type { SearchResult } from '../ai/tools/search-tool.interface';
import { SearchService } from '../ai/tools/search.service';
import { AiCommand, type AiCommandOptions, inputText, writeJson } from './ai-command.base';
import { UsageError } from './cli.errors';
import { toCliError } from './cli-input-errors';
import { checkSearchTools } from '../config/server-start-checks';

interface SearchCommandOptions extends AiCommandOptions {
  tool?: string;
  limit?: number;
  generate?: boolean;
}

/**
 * `tollgate search [TEXT]`: the same search as POST /v1/search; `--generate` opts in to an answer over
 * the results (POST /v1/search/generate). Without it no AI provider is contacted.
 */
@Command({
  name: 'search',
  arguments: '[text]',
  description: 'Search the web through a configured search tool (TEXT, or stdin when TEXT is omitted and stdin is not a terminal)',
})
export class SearchCommand extends AiCommand {
  @Option({ flags: '--tool <name>', description: 'configured search tool or group (default: search.default_tool, else web_search)' })
  parseTool(value: string): string {
    return value;
  }

  @Option({ flags: '--limit <n>', description: 'number of results (default 5, at most search.max_limit)' })
  parseLimit(value: string): number {
    if (!/^\d{1,4}$/.test(value) || Number(value) < 1) throw new UsageError(`--limit must be a positive integer (got "${value}")`);
    return Number(value);
  }

  @Option({ flags: '--generate', description: 'also generate an answer with the results as context (calls an AI provider)' })
  parseGenerate(): boolean {
    return true;
  }

  @Option({ flags: '--no-fallback', description: 'no fallback between the tools of a group, nor between providers' })
  parseNoFallback(): boolean {
    return false;
  }

  async run([argument]: string[], options: SearchCommandOptions = {}): Promise<void> {
    const query = await inputText(argument, 'search');
    const config = this.configs.load(this.command);
    await checkSearchTools(config);
    const { search } = config.ai;
    await this.withClient(options, async (client, provider) => {
      const service = SearchService.fromOptions(search, client);
      try {
        const call = { tool: options.tool, limit: options.limit, enableFallback: options.fallback };
        if (!options.generate) {
          const found = await service.search(query, call);
          if (options.format === 'json') writeJson(snakeCaseKeys({ ...found, count: found.results.length }));
          else process.stdout.write(formatResults(found.results));
          return;
        }
        const { generation, ...found } = await service.searchAndGenerate(query, { ...call, provider, model: options.model });
        if (options.format === 'json') writeJson(snakeCaseKeys({ ...found, count: found.results.length, ...generation }));
        else process.stdout.write(`${generation.response.replace(/\n?$/, '\n')}\nSources:\n${formatSources(found.results)}`);
      } catch (error) {
        throw toCliError(error);
      } finally {
        await service.close();
      }
    });
  }
}

function formatResults(results: readonly SearchResult[]): string {
  if (results.length === 0) return 'No results.\n';
  return results
    .map((result, index) => `${index + 1}. ${result.title}\n   ${result.url}\n${result.snippet ? `   ${result.snippet}\n` : ''}   (${result.source})\n`)
    .join('\n');
}

function formatSources(results: readonly SearchResult[]): string {
  if (results.length === 0) return '(none)\n';
  return results.map((result, index) => `[${index + 1}] ${result.title} - ${result.url}\n`).join('');
}
