import { Command, Option } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import { AiCommand, type AiCommandOptions, inputText, writeJson } from './ai-command.base';

/** `tollgate embed [TEXT]`: the same embedding as POST /v1/embeddings. */
@Command({
  name: 'embed',
  arguments: '[text]',
  description: 'Print the embedding of TEXT (or stdin when TEXT is omitted and stdin is not a terminal)',
})
export class EmbedCommand extends AiCommand {
  @Option({ flags: '--no-fallback', description: 'do not try other providers when this one fails' })
  parseNoFallback(): boolean {
    return false;
  }

  async run([argument]: string[], options: AiCommandOptions = {}): Promise<void> {
    const text = await inputText(argument, 'embed');
    const result = await this.withClient(options, (client, provider) =>
      client.generateEmbedding(text, { provider, model: options.model, enableFallback: options.fallback }),
    );
    // Text format: the vector alone, one JSON array on one line, ready for a pipe.
    if (options.format === 'json') writeJson(snakeCaseKeys({ ...result }));
    else process.stdout.write(`${JSON.stringify(result.embedding)}\n`);
  }
}
