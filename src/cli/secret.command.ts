import { Command, CommandRunner, Option } from 'nest-commander';
import { UsageError } from './cli.errors';
import {
  encodeSecret,
  generateSecretBytes,
  parseBoundedInteger,
  SECRET_COUNT_RANGE,
  SECRET_DEFAULTS,
  SECRET_FORMATS,
  SECRET_LENGTH_RANGE,
  type SecretFormat,
  secretHeader,
} from './secret-generator';

interface SecretOptions {
  format?: SecretFormat;
  env?: boolean;
  count?: number;
  quiet?: boolean;
  length?: number;
}

/** `tollgate secret` (docs/decisions.md A9): secrets for jwt_secret / JWT_SECRET. */
@Command({
  name: 'secret',
  description: `Generate random JWT secrets (default: one ${SECRET_DEFAULTS.length}-byte secret, hex)`,
})
export class SecretCommand extends CommandRunner {
  @Option({ flags: '--format <format>', description: 'hex, base64 or raw (raw writes the bytes themselves)' })
  parseFormat(value: string): SecretFormat {
    if (!(SECRET_FORMATS as readonly string[]).includes(value)) {
      throw new UsageError(`--format must be one of ${SECRET_FORMATS.join(', ')} (got "${value}")`);
    }
    return value as SecretFormat;
  }

  @Option({ flags: '--env', description: 'print JWT_SECRET=<secret> lines' })
  parseEnv(): boolean {
    return true;
  }

  @Option({ flags: '--count <n>', description: `number of secrets, ${SECRET_COUNT_RANGE.min}..${SECRET_COUNT_RANGE.max} (default 1)` })
  parseCount(value: string): number {
    const count = parseBoundedInteger(value, SECRET_COUNT_RANGE.min, SECRET_COUNT_RANGE.max);
    if (count === undefined) {
      throw new UsageError(`--count must be an integer from ${SECRET_COUNT_RANGE.min} to ${SECRET_COUNT_RANGE.max} (got "${value}")`);
    }
    return count;
  }

  @Option({ flags: '--quiet', description: 'print only the secret(s), one per line' })
  parseQuiet(): boolean {
    return true;
  }

  @Option({
    flags: '--length <bytes>',
    description: `bytes of randomness, ${SECRET_LENGTH_RANGE.min}..${SECRET_LENGTH_RANGE.max} (default ${SECRET_DEFAULTS.length})`,
  })
  parseLength(value: string): number {
    const length = parseBoundedInteger(value, SECRET_LENGTH_RANGE.min, SECRET_LENGTH_RANGE.max);
    if (length === undefined) {
      throw new UsageError(`--length must be an integer from ${SECRET_LENGTH_RANGE.min} to ${SECRET_LENGTH_RANGE.max} (got "${value}")`);
    }
    return length;
  }

  async run(_params: string[], options: SecretOptions = {}): Promise<void> {
    const format = options.format ?? SECRET_DEFAULTS.format;
    const length = options.length ?? SECRET_DEFAULTS.length;
    const count = options.count ?? SECRET_DEFAULTS.count;

    if (format === 'raw') {
      // Binary output has no line structure: one secret, bytes only, the header (if any) on stderr.
      if (options.env) throw new UsageError('--env cannot be combined with --format raw (binary is not a valid variable value)');
      if (count !== 1) throw new UsageError('--format raw writes exactly one secret; drop --count');
      if (!options.quiet) process.stderr.write(`${secretHeader(length, format, count)}\n`);
      process.stdout.write(generateSecretBytes(length));
      return;
    }

    const lines: string[] = options.quiet ? [] : [secretHeader(length, format, count)];
    for (let i = 0; i < count; i++) {
      const secret = encodeSecret(generateSecretBytes(length), format);
      lines.push(options.env ? `JWT_SECRET=${secret}` : secret);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
