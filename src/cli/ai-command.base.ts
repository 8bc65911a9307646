import { resolve } from 'node:path';
import { Injectable } from '@nestjs/common';
import { CommandRunner, Option } from 'nest-commander';
import { AiClient } from '../ai/client/ai-client';
import { ProviderRegistry } from '../ai/client/provider-registry';
import { toClientOptions } from '../ai/ai.module';
import type { ConfigOverride, TollgateConfig } from '../config/config.types';
import { runWithCallContext } from '../governance/call-context';
import { createLedgerStore, LedgerService } from '../governance/ledger/ledger.service';
import { UsageError } from './cli.errors';
import { CliConfigService } from './cli-config.service';
import { localUser } from './local-user';

export const OUTPUT_FORMATS = ['text', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Options every AI command shares; the provider-specific ones become configuration overrides. */
export interface AiCommandOptions {
  provider?: string;
  model?: string;
  chatModel?: string;
  embeddingModel?: string;
  apiKey?: string;
  apiKeyEnv?: string;
  format?: OutputFormat;
  systemPrompt?: string;
  promptTemplatesFile?: string;
  /** Commander's `--no-fallback` sets this to false. */
  fallback?: boolean;
}

/**
 * Base of `providers`, `health`, `generate` and `embed`: the shared options, and the same AiClient the
 * HTTP API uses, built from the configuration with these flags on top (CLI > environment > YAML > defaults).
 */
@Injectable()
export abstract class AiCommand extends CommandRunner {
  constructor(protected readonly configs: CliConfigService) {
    super();
  }

  @Option({ flags: '--provider <name>', description: 'registered provider to use (default: the configured default provider)' })
  parseProvider(value: string): string {
    return value;
  }

  @Option({ flags: '--model <name>', description: 'model for this call (chat model for generate, embedding model for embed)' })
  parseModel(value: string): string {
    return value;
  }

  @Option({ flags: '--chat-model <name>', description: "overrides the provider's chat_model" })
  parseChatModel(value: string): string {
    return value;
  }

  @Option({ flags: '--embedding-model <name>', description: "overrides the provider's embedding_model" })
  parseEmbeddingModel(value: string): string {
    return value;
  }

  @Option({ flags: '--api-key <key>', description: "the provider's API key (prefer --api-key-env: command lines are visible to other users)" })
  parseApiKey(value: string): string {
    return value;
  }

  @Option({ flags: '--api-key-env <name>', description: 'name of an environment variable holding the API key' })
  parseApiKeyEnv(value: string): string {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) throw new UsageError(`--api-key-env must be an environment variable name (got "${value}")`);
    return value;
  }

  @Option({ flags: '--format <format>', description: 'text (default) or json' })
  parseFormat(value: string): OutputFormat {
    if (!(OUTPUT_FORMATS as readonly string[]).includes(value)) {
      throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')} (got "${value}")`);
    }
    return value as OutputFormat;
  }

  @Option({ flags: '--json', name: 'format', description: 'same as --format json' })
  parseJson(): OutputFormat {
    return 'json';
  }

  /**
   * Runs `use` with a client built from the configuration and the flags; its pools are closed afterwards.
   * With a PostgreSQL ledger configured, its model calls are recorded there for the local account
   * (docs/governance.md#ledger-and-usage); a memory ledger would end with the command, so none is kept.
   */
  protected async withClient<T>(options: AiCommandOptions, use: (client: AiClient, provider: string | undefined) => Promise<T>): Promise<T> {
    const config = this.loadConfig(options);
    const client = new AiClient(ProviderRegistry.fromSettings(config.ai.providers, config.ai.images), toClientOptions(config.ai));
    const ledger = config.ledger.enabled && config.ledger.store.kind === 'postgres' ? new LedgerService(config.ledger, createLedgerStore(config.ledger)) : undefined;
    if (ledger) client.setModelCallSink(ledger.record);
    try {
      if (options.provider !== undefined && !client.providerNames().includes(options.provider)) {
        throw new UsageError(`unknown provider '${options.provider}' (registered: ${client.providerNames().join(', ') || 'none'})`);
      }
      const identity = { tenant: null, subTenant: null, subject: `local:${localUser()}`, subjectKind: 'local' as const, roles: [] };
      return await runWithCallContext({ identity, route: `tollgate ${this.command.name()}` }, () => use(client, options.provider));
    } finally {
      try {
        await client.close();
      } finally {
        // The ledger reports entries it could not write itself; closing its pool must not fail a command that ran.
        await ledger?.onApplicationShutdown().catch(() => undefined);
      }
    }
  }

  /** Loads once to learn the target provider, then again with the flags as overrides on it. */
  private loadConfig(options: AiCommandOptions): TollgateConfig {
    const overrides: ConfigOverride[] = [];
    if (options.promptTemplatesFile !== undefined) {
      // Relative to where the command runs, not to the configuration file.
      overrides.push({ source: '--prompt-templates-file', path: ['prompts', 'file'], value: resolve(options.promptTemplatesFile) });
    }
    const base = this.configs.load(this.command, overrides);
    const apiKey = options.apiKey ?? apiKeyFromEnvironment(options.apiKeyEnv);
    const providerFlags: Array<[string, string, string | undefined]> = [
      ['--api-key', 'api_key', apiKey],
      ['--chat-model', 'chat_model', options.chatModel],
      ['--embedding-model', 'embedding_model', options.embeddingModel],
    ];
    if (providerFlags.every(([, , value]) => value === undefined)) return base;
    const target = options.provider ?? base.ai.defaultProvider;
    for (const [source, key, value] of providerFlags) {
      if (value !== undefined) overrides.push({ source, path: ['providers', target, key], value });
    }
    return this.configs.load(this.command, overrides);
  }
}

function apiKeyFromEnvironment(variable: string | undefined): string | undefined {
  if (variable === undefined) return undefined;
  const value = process.env[variable];
  if (value === undefined || value === '') throw new UsageError(`--api-key-env: environment variable ${variable} is not set`);
  return value;
}

/** TEXT from the argument, else from stdin when it is not a terminal; a usage error otherwise. */
export async function inputText(argument: string | undefined, command: string): Promise<string> {
  let text = argument;
  if (text === undefined) {
    if (process.stdin.isTTY) throw new UsageError(`${command}: TEXT is required (as an argument, or piped on stdin)`);
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    // A single trailing newline is the shell's, not part of the text.
    text = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  if (text.trim() === '') throw new UsageError(`${command}: TEXT is empty`);
  return text;
}

export function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
