import { ConfigError } from '../../src/config/config.error';

/** The problems a configuration load reports; fails the test when `run` throws something else or nothing. */
export function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
