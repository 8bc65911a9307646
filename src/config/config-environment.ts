import type { ConfigOverride } from './config.types';

/** An environment variable that fills one configuration key (above YAML, below command-line flags). */
export interface EnvironmentBinding {
  variable: string;
  path: string[];
}

/** Fixed variables; provider variables (`<KIND>_API_KEY`, ...) depend on the document, see provider-environment.ts. */
export const ENVIRONMENT_BINDINGS: readonly EnvironmentBinding[] = [
  { variable: 'PORT', path: ['server', 'port'] },
  { variable: 'HOST', path: ['server', 'host'] },
  { variable: 'TOLLGATE_BODY_LIMIT', path: ['server', 'body_limit'] },
  { variable: 'TOLLGATE_CHAT_BODY_LIMIT', path: ['server', 'chat_body_limit'] },
  { variable: 'TOLLGATE_BASE_PATH', path: ['server', 'base_path'] },
  { variable: 'TOLLGATE_SHUTDOWN_TIMEOUT', path: ['server', 'shutdown_timeout'] },
  { variable: 'TOLLGATE_SHUTDOWN_GRACE', path: ['server', 'shutdown_grace'] },
  { variable: 'JWT_SECRET', path: ['auth', 'jwt_secret'] },
  { variable: 'API_TOKEN', path: ['api', 'token'] },
  { variable: 'MCP_TOKEN', path: ['mcp', 'token'] },
  { variable: 'METRICS_TOKEN', path: ['metrics', 'token'] },
  { variable: 'TOLLGATE_ADMIN_TOKEN', path: ['governance', 'admin_token'] },
  { variable: 'TOLLGATE_REQUEST_LOGS', path: ['logs', 'requests'] },
  { variable: 'TOLLGATE_DEFAULT_PROVIDER', path: ['ai', 'default_provider'] },
];

/** The bound variables that are set (empty counts as unset), as overrides. */
export function environmentOverrides(
  env: NodeJS.ProcessEnv,
  bindings: readonly EnvironmentBinding[] = ENVIRONMENT_BINDINGS,
): ConfigOverride[] {
  const overrides: ConfigOverride[] = [];
  for (const { variable, path } of bindings) {
    const value = env[variable];
    if (value !== undefined && value !== '') overrides.push({ source: variable, path, value });
  }
  return overrides;
}
