import { Injectable } from '@nestjs/common';
import type { Command } from 'commander';
import { InjectCommander } from 'nest-commander';

export const CONFIG_OPTION_HELP = 'YAML configuration file (default: $TOLLGATE_CONFIG, else config/tollgate.yaml if present)';

/**
 * Shapes the commander tree nest-commander built: program name, the global --config option,
 * `tollgate: <message>` errors, and exceptions instead of process.exit so exit codes are decided in one place.
 */
@Injectable()
export class CliProgram {
  constructor(@InjectCommander() private readonly program: Command) {}

  configure(version: string): void {
    this.program
      .name('tollgate')
      .description('JWT authentication, two-level tenancy and RBAC for NestJS, plus an AI provider gateway')
      .version(version, '-V, --version')
      .option('--config <path>', CONFIG_OPTION_HELP);
    this.walk(this.program);
  }

  private walk(command: Command): void {
    command
      .exitOverride((error) => {
        throw error;
      })
      .configureOutput({
        outputError: (text, write) => write(`tollgate: ${text.replace(/^error: /, '')}`),
      })
      .configureHelp({ showGlobalOptions: true })
      .showHelpAfterError(`(run '${fullName(command)} --help' for usage)`)
      .allowExcessArguments(false);
    for (const sub of command.commands) this.walk(sub);
  }
}

function fullName(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}
