import 'reflect-metadata';
import './server/nest-common-preload';
import { ConfigError } from './config/config.error';
import { loadConfig } from './config/config.loader';
import { checkServerStart } from './config/server-start-checks';
import { startHttpServer } from './server/http-server';
import { parseServerArgs, SERVER_USAGE } from './server/server-args';

async function bootstrap(): Promise<void> {
  let args;
  try {
    args = parseServerArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`tollgate: ${(error as Error).message}\n${SERVER_USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write(SERVER_USAGE);
    return;
  }
  const config = loadConfig({ configPath: args.configPath, overrides: args.overrides });
  await checkServerStart(config);
  await startHttpServer(config);
}

bootstrap().catch((error: unknown) => {
  // Configuration and option errors carry their own precise text; anything else is reported by message only.
  const lines = error instanceof ConfigError ? error.problems : [(error as Error)?.message ?? String(error)];
  for (const line of lines) process.stderr.write(`tollgate: ${line}\n`);
  process.exit(1);
});
