import { parseArgs } from 'node:util';
import type { ConfigOverride } from '../config/config.types';

export interface ServerArgs {
  help: boolean;
  configPath?: string;
  overrides: ConfigOverride[];
}

export const SERVER_USAGE = `Usage: node dist/src/main.js [--config PATH] [--port N] [--host ADDRESS]

Starts the Tollgate HTTP server.

Options:
  --config PATH     YAML configuration (default: $TOLLGATE_CONFIG, else config/tollgate.yaml if present)
  --port N          listen port (beats PORT and server.port; default 3000)
  --host ADDRESS    listen address (beats HOST and server.host; default 127.0.0.1)
  -h, --help        show this help
`;

/** Command-line flags of the server entry; they sit above environment and YAML in precedence. */
export function parseServerArgs(argv: string[]): ServerArgs {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const overrides: ConfigOverride[] = [];
  if (values.port !== undefined) overrides.push({ source: '--port', path: ['server', 'port'], value: parsePortFlag(values.port) });
  if (values.host !== undefined) overrides.push({ source: '--host', path: ['server', 'host'], value: values.host });
  return { help: values.help ?? false, configPath: values.config, overrides };
}

/** A bad --port is a usage error (exit 2), caught before configuration is read. */
export function parsePortFlag(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new Error(`--port must be an integer from 0 to 65535 (got "${text}")`);
  return Number(text);
}
