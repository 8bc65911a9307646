import { Command } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import { AiCommand, type AiCommandOptions, writeJson } from './ai-command.base';

/** `tollgate providers`: the registered providers, never their keys. */
@Command({ name: 'providers', description: 'List the registered AI providers and their settings (keys are never shown)' })
export class ProvidersCommand extends AiCommand {
  async run(_params: string[], options: AiCommandOptions = {}): Promise<void> {
    await this.withClient(options, async (client) => {
      const providers = client.describeProviders();
      if (options.format === 'json') {
        writeJson(snakeCaseKeys({ defaultProvider: client.defaultProvider, providers }));
        return;
      }
      for (const provider of providers) {
        const capabilities = provider.capabilities as Record<string, boolean>;
        const parts = [
          `${provider.name} (${provider.kind})${provider.default ? ' [default]' : ''}`,
          provider.url ? `url ${provider.url}` : undefined,
          provider.chatModel ? `chat ${provider.chatModel}` : undefined,
          capabilities.embeddings ? `embeddings ${provider.embeddingModel ?? '(provider default)'}` : 'no embeddings',
        ];
        process.stdout.write(`${parts.filter(Boolean).join('  ')}\n`);
      }
    });
  }
}
