import { ConfigError } from '../config/config.error';

/** Bad invocation: unknown command or option, missing argument, invalid option value. Exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A command that was invoked correctly but could not do its job (store unreachable, bad input file). Exit 1. */
export class OperationError extends Error {
  override readonly name = 'OperationError';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Commander's own outcomes that are not failures. */
const COMMANDER_SUCCESS = new Set(['commander.helpDisplayed', 'commander.version']);

/**
 * The one place where CLI errors become exit codes and stderr lines (`tollgate: <message>`).
 * Commander has already printed its own messages through the configured output, so they are not repeated.
 */
export function reportCliError(error: unknown, writeErr: (text: string) => void): number {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && code.startsWith('commander.')) {
    return COMMANDER_SUCCESS.has(code) ? EXIT_OK : EXIT_USAGE;
  }
  if (error instanceof UsageError) {
    writeErr(`tollgate: ${error.message}\n`);
    return EXIT_USAGE;
  }
  const lines =
    error instanceof ConfigError || error instanceof OperationError
      ? error.problems
      : [(error as Error)?.message || String(error)];
  for (const line of lines) writeErr(`tollgate: ${line}\n`);
  return EXIT_FAILURE;
}
