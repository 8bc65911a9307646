import { regexSource } from '../auth/skip-paths';
import { DEFAULT_LIMITS_KEY_PREFIX, LIMITS_OFF, type LimitsSettings, type RateLimit, type RouteGroupLimits } from '../limits/limits-settings';
import { ConfigError } from './config.error';
import type { ConfigDocument, RateLimitSection, RouteGroupSection } from './config.types';

/** The `limits:` section; cross-key rules the schema cannot state are refused here, each naming its key. */
export function toLimitsSettings(document: ConfigDocument, source: string): LimitsSettings {
  const limits = document.limits;
  if (!limits) return LIMITS_OFF;
  const problems: string[] = [];
  const storeKind = limits.store ?? 'memory';
  if (storeKind === 'redis' && limits.redis_url === undefined) problems.push('limits.redis_url: is required for store redis');
  if (storeKind === 'memory' && limits.redis_url !== undefined) problems.push('limits.redis_url: applies to store redis only');
  if (storeKind === 'memory' && limits.redis_key_prefix !== undefined) problems.push('limits.redis_key_prefix: applies to store redis only');
  const routes = limits.routes ?? [];
  const apiAuth = document.api?.auth ?? 'token';
  const checkScopes = (key: string, section: { tenant?: RateLimitSection; token?: RateLimitSection }) => {
    if (section.tenant && !document.auth) problems.push(`${key}.tenant: needs the AuthModule configured (an auth: section or JWT_SECRET)`);
    if (section.token && apiAuth !== 'token') problems.push(`${key}.token: applies to api.auth token only (api.auth is ${apiAuth})`);
  };
  checkScopes('limits', limits);
  const names = new Set<string>();
  routes.forEach((group, index) => {
    const key = `limits.routes[${index}]`;
    if (!group.tenant && !group.token) problems.push(`${key}: set tenant, token or both`);
    checkScopes(key, group);
    if (names.has(group.name)) problems.push(`${key}.name: "${group.name}" names another group too`);
    names.add(group.name);
    group.paths.forEach((path, pathIndex) => {
      if (!isValidPathEntry(path)) problems.push(`${key}.paths[${pathIndex}]: must be a valid regular expression`);
    });
  });
  if (!limits.tenant && !limits.token && routes.length === 0 && limits.enabled !== false) {
    problems.push('limits: set tenant, token, routes or several (or enabled: false)');
  }
  if (problems.length) throw new ConfigError(problems.map((problem) => `${source}: ${problem}`));
  const basePath = document.server?.base_path ?? '';
  return {
    enabled: limits.enabled ?? true,
    store:
      storeKind === 'redis'
        ? { kind: 'redis', url: limits.redis_url!, keyPrefix: limits.redis_key_prefix ?? DEFAULT_LIMITS_KEY_PREFIX }
        : { kind: 'memory' },
    ...(limits.tenant ? { tenant: toRateLimit(limits.tenant) } : {}),
    ...(limits.token ? { token: toRateLimit(limits.token) } : {}),
    routes: routes.map((group) => toRouteGroup(group, basePath)),
  };
}

/** Sub-millisecond windows round up to 1 ms; the schema bounds the rest. */
function toRateLimit(section: RateLimitSection): RateLimit {
  return { limit: section.limit, windowMs: Math.max(1, Math.round(section.window * 1000)) };
}

/** Exact and prefix paths are written relative to the mount, like the routes; regular expressions see the full path. */
function toRouteGroup(group: RouteGroupSection, basePath: string): RouteGroupLimits {
  return {
    name: group.name,
    paths: group.paths.map((path) => (regexSource(path) === undefined ? `${basePath}${path}` : path)),
    ...(group.tenant ? { tenant: toRateLimit(group.tenant) } : {}),
    ...(group.token ? { token: toRateLimit(group.token) } : {}),
  };
}

function isValidPathEntry(path: string): boolean {
  const source = regexSource(path);
  if (source === undefined) return true;
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
