import type { INestApplicationContext } from '@nestjs/common';
import { CommandFactory } from 'nest-commander';
import { packageVersion } from '../common/packaged-files';
import { EXIT_OK, reportCliError } from './cli.errors';
import { CliModule } from './cli.module';
import { CliProgram } from './cli-program';

/** Runs one CLI invocation and returns its exit code: 0 success, 1 operation failure, 2 usage error. */
export async function runCli(argv: string[]): Promise<number> {
  const writeErr = (text: string) => process.stderr.write(text);
  let failure: unknown;
  let app: INestApplicationContext | undefined;
  try {
    app = await CommandFactory.createWithoutRunning(CliModule, {
      logger: false,
      serviceErrorHandler: (error) => {
        failure = error;
      },
    });
    app.get(CliProgram).configure(packageVersion());
    await CommandFactory.runApplication(app);
  } catch (error) {
    failure = error;
  } finally {
    await app?.close();
  }
  return failure === undefined ? EXIT_OK : reportCliError(failure, writeErr);
}
