import { Command, Option } from 'nest-commander';
import { FileDocumentSource } from '../ai/documents/file-document-source';
import { snakeCaseKeys } from '../ai/http/api-response';
import type { ContextItem } from '../ai/prompts/context-rendering';
import type { GenerateOptions, GenerateResponse, GenerateStreamEvent } from '../ai/client/ai-client';
import type { ChatMessage, ResponseFormat, ToolChoice, ToolDefinition } from '../ai/providers/ai-provider.interface';
import { AiCommand, type AiCommandOptions, inputText, type OutputFormat, writeJson } from './ai-command.base';
import { UsageError } from './cli.errors';
import { toCliError } from './cli-input-errors';
import { imageFlag, responseFormatFlag, toolChoiceFlag, toolsFlag } from './generate-inputs';

interface GenerateCommandOptions extends AiCommandOptions {
  jsonFile?: string;
  stream?: boolean;
  responseFormat?: ResponseFormat;
  image?: string[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
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

  @Option({ flags: '--response-format <format>', description: 'text, json_object, or a JSON Schema file the answer must match' })
  parseResponseFormat(value: string): ResponseFormat {
    return responseFormatFlag(value);
  }

  @Option({ flags: '--image <path|url>', description: 'an image for the model to read: a .png/.jpg/.gif/.webp file or an http(s) URL; repeatable' })
  parseImage(value: string, previous: string[] = []): string[] {
    return [...previous, value];
  }

  @Option({ flags: '--tools <file>', description: 'a JSON file of tools the model may call ({name, description, parameters}, or OpenAI\'s shape); calls are printed, not run' })
  parseTools(value: string): ToolDefinition[] {
    return toolsFlag(value);
  }

  @Option({ flags: '--tool-choice <choice>', description: 'with --tools: auto, none, required, or the name of the tool to call' })
  parseToolChoice(value: string): ToolChoice {
    return toolChoiceFlag(value);
  }

  async run([argument]: string[], options: GenerateCommandOptions = {}): Promise<void> {
    const prompt = await inputText(argument, 'generate');
    if (options.toolChoice !== undefined && options.tools === undefined) throw new UsageError('--tool-choice needs --tools');
    const generateOptions: GenerateOptions = {
      model: options.model,
      systemPrompt: options.systemPrompt,
      enableFallback: options.fallback,
      ...(options.responseFormat ? { responseFormat: options.responseFormat } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.toolChoice !== undefined ? { toolChoice: options.toolChoice } : {}),
    };
    if (options.image?.length) {
      await this.runWithImages(prompt, options.image, generateOptions, options);
      return;
    }
    const documents = options.jsonFile === undefined ? [] : await this.loadDocuments(options.jsonFile);
    if (options.stream) {
      await this.withClient(options, (client, provider) =>
        printStream(client.streamResponse(prompt, documents, { ...generateOptions, provider }), options.format ?? 'text'),
      );
      return;
    }
    const result = await this.withClient(options, (client, provider) => client.generateResponse(prompt, documents, { ...generateOptions, provider }));
    printResult(result, options.format);
  }

  /**
   * Images go in one user message with the text (no prompt templates: messages go as given, as on
   * /openai/v1), so context documents, which only the templates place, cannot come with them.
   */
  private async runWithImages(prompt: string, images: string[], generateOptions: GenerateOptions, options: GenerateCommandOptions): Promise<void> {
    if (options.jsonFile !== undefined) throw new UsageError('--image cannot be combined with --json-file (documents go into the prompt templates, images into a message)');
    const messages: ChatMessage[] = [{ role: 'user', content: [{ type: 'text', text: prompt }, ...images.map(imageFlag)] }];
    if (options.stream) {
      await this.withClient(options, (client, provider) => printStream(client.streamMessages(messages, { ...generateOptions, provider }), options.format ?? 'text'));
      return;
    }
    const result = await this.withClient(options, (client, provider) => client.generateMessages(messages, { ...generateOptions, provider }));
    printResult(result, options.format);
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

function printResult(result: GenerateResponse, format: OutputFormat | undefined): void {
  if (format === 'json') writeJson(snakeCaseKeys({ ...result }));
  else {
    if (result.response !== '' || !result.toolCalls?.length) process.stdout.write(result.response.endsWith('\n') ? result.response : `${result.response}\n`);
    // The CLI does not run tools: it shows each call the model asked for, one per line.
    for (const call of result.toolCalls ?? []) process.stdout.write(`tool call ${call.name} ${call.arguments}\n`);
  }
}

/**
 * Text: each delta as it arrives, then a newline unless the answer ended with one (also before an error, so
 * the message on stderr starts on its own line). JSON: one event per line, `{"type":"delta","text"}` then
 * `{"type":"done",...}` in the API's snake_case.
 */
async function printStream(events: AsyncIterable<GenerateStreamEvent>, format: OutputFormat): Promise<void> {
  let lastText = '';
  // Text mode assembles streamed tool calls by index and prints them as printResult does, at the end.
  const calls: Array<{ name: string; arguments: string }> = [];
  try {
    for await (const event of events) {
      if (format === 'json') process.stdout.write(`${JSON.stringify(snakeCaseKeys(event))}\n`);
      else if (event.type === 'delta') {
        if (event.text !== '') {
          process.stdout.write(event.text);
          lastText = event.text;
        }
        for (const delta of event.toolCalls ?? []) {
          const call = (calls[delta.index] ??= { name: '', arguments: '' });
          if (delta.name) call.name = delta.name;
          call.arguments += delta.arguments ?? '';
        }
      }
    }
  } finally {
    if (format === 'text' && lastText !== '' && !lastText.endsWith('\n')) process.stdout.write('\n');
  }
  for (const call of calls) if (call) process.stdout.write(`tool call ${call.name} ${call.arguments}\n`);
}
