import { Command, Option } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import type { AiClient } from '../ai/client/ai-client';
import { AiCommand, type AiCommandOptions, writeJson } from './ai-command.base';

interface ProvidersOptions extends AiCommandOptions {
  health?: boolean;
}

/** `tollgate providers`: the registered providers, never their keys; `--health`: the deployments' cool-downs. */
@Command({ name: 'providers', description: 'List the registered AI providers and their settings (keys are never shown)' })
export class ProvidersCommand extends AiCommand {
  @Option({
    flags: '--health',
    description: 'show the deployments of aliases that have them: healthy, cooling (and for how long) or probing, as shared through ai.deployment_health (Redis), else this process knows none',
  })
  parseHealth(): boolean {
    return true;
  }

  async run(_params: string[], options: ProvidersOptions = {}): Promise<void> {
    await this.withClient(options, async (client) => {
      if (options.health) {
        await printDeployments(client, options.format === 'json');
        return;
      }
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

async function printDeployments(client: AiClient, json: boolean): Promise<void> {
  const deployments = (await client.sharedDeploymentStatus()).map(({ alias, strategy, deployment, weight, state, retryAfterSeconds }) => ({
    alias,
    strategy,
    deployment,
    weight,
    state,
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
  }));
  if (json) {
    writeJson(snakeCaseKeys({ deployments }));
    return;
  }
  if (deployments.length === 0) process.stdout.write('no alias is configured with deployments\n');
  for (const entry of deployments) {
    const state = entry.retryAfterSeconds !== undefined ? `${entry.state} (${entry.retryAfterSeconds} s left)` : entry.state;
    process.stdout.write(`${entry.alias} (${entry.strategy})  ${entry.deployment}  weight ${entry.weight}  ${state}\n`);
  }
}
