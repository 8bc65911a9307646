import { Command, Option } from 'nest-commander';
import { FileDocumentSource } from '../ai/documents/file-document-source';
import { snakeCaseKeys } from '../ai/http/api-response';
import type { ContextItem } from '../ai/prompts/context-rendering';
import type { GenerateOptions, GenerateStreamEvent } from '../ai/client/ai-client';
import { AiCommand, type AiCommandOptions, inputText, type OutputFormat, writeJson } from './ai-command.base';
import { toCliError } from './cli-input-errors';

interface GenerateCommandOptions extends AiCommandOptions {
  jsonFile?: string;
  stream?: boolean;
}

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

  @Option({ flags: '--json-file <path>', description: 'JSON documents (an array of objects or strings) used as context; bounded by documents:' })
  parseJsonFile(value: string): string {
    return value;
  }

  @Option({ flags: '--stream', description: 'print the answer as it arrives (with --format json: one JSON event per line)' })
  parseStream(): boolean {
    return true;
  }

  async run([argument]: string[], options: GenerateCommandOptions = {}): Promise<void> {
    const prompt = await inputText(argument, 'generate');
    const documents = options.jsonFile === undefined ? [] : await this.loadDocuments(options.jsonFile);
    const generateOptions: GenerateOptions = { model: options.model, systemPrompt: options.systemPrompt, enableFallback: options.fallback };
    if (options.stream) {
      await this.withClient(options, (client, provider) =>
        printStream(client.streamResponse(prompt, documents, { ...generateOptions, provider }), options.format ?? 'text'),
      );
      return;
    }
    const result = await this.withClient(options, (client, provider) => client.generateResponse(prompt, documents, { ...generateOptions, provider }));
    if (options.format === 'json') writeJson(snakeCaseKeys({ ...result }));
    else process.stdout.write(result.response.endsWith('\n') ? result.response : `${result.response}\n`);
  }

  /** Bad content or a missing file: exit 2; a file that cannot be read: exit 1. */
  private async loadDocuments(path: string): Promise<ContextItem[]> {
    const bounds = this.configs.load(this.command).ai.documents;
    try {
      return await new FileDocumentSource(path, '--json-file', bounds).load();
    } catch (error) {
      throw toCliError(error);
    }
  }
}

/**
 * Text: each delta as it arrives, then a newline unless the answer ended with one (also before an error, so
 * the message on stderr starts on its own line). JSON: one event per line, `{"type":"delta","text"}` then
 * `{"type":"done",...}` in the API's snake_case.
 */
async function printStream(events: AsyncIterable<GenerateStreamEvent>, format: OutputFormat): Promise<void> {
  let lastText = '';
  try {
    for await (const event of events) {
      if (format === 'json') process.stdout.write(`${JSON.stringify(snakeCaseKeys(event))}\n`);
      else if (event.type === 'delta' && event.text !== '') {
        process.stdout.write(event.text);
        lastText = event.text;
      }
    }
  } finally {
    if (format === 'text' && lastText !== '' && !lastText.endsWith('\n')) process.stdout.write('\n');
  }
}
