import type { ServerConfig } from './config.types';

/** Built-in defaults (lowest precedence). The schema's `default` annotations document the same values. */
export const DEFAULT_SERVER_CONFIG: Readonly<ServerConfig> = Object.freeze({
  port: 3000,
  host: '127.0.0.1',
  bodyLimit: 1024 * 1024,
  chatBodyLimit: 20 * 1024 * 1024,
  jsonValueLimit: 250_000,
  basePath: '',
  shutdownTimeoutMs: 25_000,
  shutdownGraceMs: 0,
});

/** Looked for in the working directory when neither --config nor TOLLGATE_CONFIG names a file. */
export const DEFAULT_CONFIG_FILE = 'config/tollgate.yaml';

/** Environment variable naming the configuration file. */
export const CONFIG_FILE_VARIABLE = 'TOLLGATE_CONFIG';
