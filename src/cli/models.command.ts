import { Command } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import { AiCommand, type AiCommandOptions, writeJson } from './ai-command.base';
import { OperationError } from './cli.errors';

/**
 * `tollgate models`: the same listing as GET /v1/models. Text lines are `provider/model`, the `model` the
 * OpenAI-compatible API takes; a provider whose listing failed is named on stderr and the exit code is 1.
 */
@Command({ name: 'models', description: "List the models of every provider (or --provider NAME), as GET /v1/models; exit 1 if a provider's listing failed" })
export class ModelsCommand extends AiCommand {
  async run(_params: string[], options: AiCommandOptions = {}): Promise<void> {
    const listing = await this.withClient(options, (client, provider) => client.listModels(provider));
    if (options.format === 'json') writeJson(snakeCaseKeys({ ...listing }));
    else for (const model of listing.models) process.stdout.write(`${model.provider}/${model.id}\n`);
    if (listing.errors.length) throw new OperationError(listing.errors.map((error) => error.message));
  }
}
