import { Command } from 'nest-commander';
import { snakeCaseKeys } from '../ai/http/api-response';
import { AiCommand, type AiCommandOptions, writeJson } from './ai-command.base';

/** `tollgate capabilities`: what each provider can do, as GET /v1/capabilities. */
@Command({ name: 'capabilities', description: 'List what each provider supports (as GET /v1/capabilities)' })
export class CapabilitiesCommand extends AiCommand {
  async run(_params: string[], options: AiCommandOptions = {}): Promise<void> {
    const providers = await this.withClient(options, async (client, provider) =>
      client.capabilities().filter((entry) => provider === undefined || entry.provider === provider),
    );
    if (options.format === 'json') {
      writeJson(snakeCaseKeys({ providers }));
      return;
    }
    for (const entry of providers) {
      const supported = Object.entries(snakeCaseKeys(entry.capabilities) as Record<string, boolean>).filter(([, value]) => value === true).map(([name]) => name);
      process.stdout.write(`${entry.provider} (${entry.kind}): ${supported.join(', ') || 'nothing'}\n`);
    }
  }
}
