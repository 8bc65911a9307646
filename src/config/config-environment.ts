import type { ConfigOverride } from './config.types';

/** An environment variable that fills one configuration key (above YAML, below command-line flags). */
export interface EnvironmentBinding {
  variable: string;
  path: string[];
}

/** Later sections append their variables here (e.g. `<PROVIDER>_API_KEY` -> providers.<name>.api_key). */
export const ENVIRONMENT_BINDINGS: readonly EnvironmentBinding[] = [
  { variable: 'PORT', path: ['server', 'port'] },
  { variable: 'HOST', path: ['server', 'host'] },
  { variable: 'TOLLGATE_BODY_LIMIT', path: ['server', 'body_limit'] },
  { variable: 'TOLLGATE_BASE_PATH', path: ['server', 'base_path'] },
  { variable: 'JWT_SECRET', path: ['auth', 'jwt_secret'] },
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
