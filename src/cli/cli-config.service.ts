import { Injectable } from '@nestjs/common';
import type { Command } from 'commander';
import { loadConfig } from '../config/config.loader';
import type { ConfigOverride, TollgateConfig } from '../config/config.types';

/** Loads the configuration for a command, honouring the global `--config PATH` option. */
@Injectable()
export class CliConfigService {
  configPath(command: Command): string | undefined {
    return (command.optsWithGlobals() as { config?: string }).config;
  }

  load(command: Command, overrides: ConfigOverride[] = []): TollgateConfig {
    return loadConfig({ configPath: this.configPath(command), overrides });
  }
}
