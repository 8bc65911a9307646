import { Command, CommandRunner, Option } from 'nest-commander';
import type { ConfigOverride } from '../config/config.types';
import { checkServerStart } from '../config/server-start-checks';
import { startHttpServer } from '../server/http-server';
import { parsePortFlag } from '../server/server-args';
import { UsageError } from './cli.errors';
import { CliConfigService } from './cli-config.service';

interface ServeOptions {
  port?: number;
  host?: string;
}

/** `tollgate serve`: the same server as `npm start`; runs until SIGTERM / SIGINT. */
@Command({ name: 'serve', description: 'Start the HTTP server (same as npm start)' })
export class ServeCommand extends CommandRunner {
  constructor(private readonly configs: CliConfigService) {
    super();
  }

  @Option({ flags: '--port <n>', description: 'listen port (beats PORT and server.port; default 3000)' })
  parsePort(value: string): number {
    try {
      return parsePortFlag(value);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }

  @Option({ flags: '--host <address>', description: 'listen address (beats HOST and server.host; default 127.0.0.1)' })
  parseHost(value: string): string {
    return value;
  }

  async run(_params: string[], options: ServeOptions = {}): Promise<void> {
    const overrides: ConfigOverride[] = [];
    if (options.port !== undefined) overrides.push({ source: '--port', path: ['server', 'port'], value: options.port });
    if (options.host !== undefined) overrides.push({ source: '--host', path: ['server', 'host'], value: options.host });
    const config = this.configs.load(this.command, overrides);
    await checkServerStart(config);
    await startHttpServer(config);
    // The graceful shutdown (src/server/graceful-shutdown.ts) ends the process once the server has drained.
    await new Promise<never>(() => undefined);
  }
}
