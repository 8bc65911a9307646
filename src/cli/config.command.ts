import { Command, CommandRunner, SubCommand } from 'nest-commander';
import { CONFIG_SCHEMA_ID } from '../config/config-schema.validator';
import { readPackagedFile } from '../common/packaged-files';
import { checkServerStart } from '../config/server-start-checks';
import { UsageError } from './cli.errors';
import { CliConfigService } from './cli-config.service';

@SubCommand({
  name: 'validate',
  description: 'Check the configuration file, environment and defaults as the server does at start; exit 1 when invalid',
})
export class ConfigValidateCommand extends CommandRunner {
  constructor(private readonly configs: CliConfigService) {
    super();
  }

  async run(): Promise<void> {
    const config = this.configs.load(this.command);
    await checkServerStart(config);
    const source = config.file ?? 'no configuration file (built-in defaults and environment)';
    process.stdout.write(`${source}: valid (schema ${CONFIG_SCHEMA_ID})\n`);
  }
}

@SubCommand({ name: 'example', description: 'Print an annotated starter config/tollgate.yaml' })
export class ConfigExampleCommand extends CommandRunner {
  async run(): Promise<void> {
    process.stdout.write(readPackagedFile('config/tollgate.example.yaml'));
  }
}

@Command({
  name: 'config',
  description: 'Validate or print configuration',
  subCommands: [ConfigValidateCommand, ConfigExampleCommand],
})
export class ConfigCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp({ error: true });
    throw new UsageError('config: missing subcommand (validate, example)');
  }
}
