import { Command, Option } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import { AiCommand, type AiCommandOptions, inputText, writeJson } from './ai-command.base';

/** `tollgate generate [TEXT]`: the same generation as POST /v1/generate. */
@Command({
  name: 'generate',
  arguments: '[text]',
  description: 'Generate text for TEXT (or stdin when TEXT is omitted and stdin is not a terminal)',
})
export class GenerateCommand extends AiCommand {
  @Option({ flags: '--system-prompt <text>', description: 'system prompt for this call (overrides the configured templates)' })
  parseSystemPrompt(value: string): string {
    return value;
  }

  @Option({ flags: '--prompt-templates-file <path>', description: 'YAML/JSON prompt templates (system_prompt, with_context, without_context, providers)' })
  parsePromptTemplatesFile(value: string): string {
    return value;
  }

  @Option({ flags: '--no-fallback', description: 'do not try other providers when this one fails' })
  parseNoFallback(): boolean {
    return false;
  }

  async run([argument]: string[], options: AiCommandOptions = {}): Promise<void> {
    const prompt = await inputText(argument, 'generate');
    const result = await this.withClient(options, (client, provider) =>
      client.generateResponse(prompt, [], {
        provider,
        model: options.model,
        systemPrompt: options.systemPrompt,
        enableFallback: options.fallback,
      }),
    );
    if (options.format === 'json') writeJson(snakeCaseKeys({ ...result }));
    else process.stdout.write(result.response.endsWith('\n') ? result.response : `${result.response}\n`);
  }
}
