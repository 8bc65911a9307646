import { Module } from '@nestjs/common';
import { AgentCommand } from './agent.command';
import { BudgetsCommand } from './budgets.command';
import { CapabilitiesCommand } from './capabilities.command';
import { CliConfigService } from './cli-config.service';
import { CliProgram } from './cli-program';
import { ConfigCommand } from './config.command';
import { EmbedCommand } from './embed.command';
import { GenerateCommand } from './generate.command';
import { HealthCommand } from './health.command';
import { KeysCommand } from './keys.command';
import { McpCommand } from './mcp.command';
import { ModelsCommand } from './models.command';
import { ProvidersCommand } from './providers.command';
import { RbacCommand } from './rbac.command';
import { SearchCommand } from './search.command';
import { SecretCommand } from './secret.command';
import { ServeCommand } from './serve.command';
import { UsageCommand } from './usage.command';
import { VectorCommand } from './vector.command';

/** A new command is one file plus one entry here (sub-commands through `registerWithSubCommands`). */
const COMMANDS = [
  SecretCommand,
  ...RbacCommand.registerWithSubCommands(),
  ...KeysCommand.registerWithSubCommands(),
  ...ConfigCommand.registerWithSubCommands(),
  ServeCommand,
  ProvidersCommand,
  ModelsCommand,
  CapabilitiesCommand,
  HealthCommand,
  GenerateCommand,
  EmbedCommand,
  SearchCommand,
  AgentCommand,
  McpCommand,
  UsageCommand,
  ...VectorCommand.registerWithSubCommands(),
  ...BudgetsCommand.registerWithSubCommands(),
];

@Module({
  providers: [CliProgram, CliConfigService, ...COMMANDS],
})
export class CliModule {}
