import { Command } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import { OperationError } from './cli.errors';
import { AiCommand, type AiCommandOptions, writeJson } from './ai-command.base';

/** `tollgate health`: exit 0 only when every checked provider is healthy. */
@Command({ name: 'health', description: 'Check provider health (all providers, or --provider NAME); exit 1 unless healthy' })
export class HealthCommand extends AiCommand {
  async run(_params: string[], options: AiCommandOptions = {}): Promise<void> {
    const results = await this.withClient(options, (client, provider) =>
      provider !== undefined ? client.healthCheck(provider).then((result) => [result]) : client.healthCheckAll(),
    );
    if (options.format === 'json') writeJson(snakeCaseKeys({ providers: results }));
    else {
      for (const r of results) {
        const state = `${r.reachable ? 'reachable' : 'unreachable'}, ${r.ready ? 'ready' : 'not ready'}`;
        process.stdout.write(`${r.provider}: ${r.status} (${state})${r.model ? ` model ${r.model}` : ''} ${r.latencyMs} ms${r.error ? ` - ${r.error}` : ''}\n`);
      }
    }
    const failing = results.filter((r) => r.status !== 'healthy').map((r) => r.provider);
    if (failing.length) throw new OperationError([`not healthy: ${failing.join(', ')}`]);
  }
}
