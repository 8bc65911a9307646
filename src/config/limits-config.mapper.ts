import { DEFAULT_LIMITS_KEY_PREFIX, LIMITS_OFF, type LimitsSettings, type RateLimit } from '../limits/limits-settings';
import { ConfigError } from './config.error';
import type { ConfigDocument, RateLimitSection } from './config.types';

/** The `limits:` section; cross-key rules the schema cannot state are refused here, each naming its key. */
export function toLimitsSettings(document: ConfigDocument, source: string): LimitsSettings {
  const limits = document.limits;
  if (!limits) return LIMITS_OFF;
  const problems: string[] = [];
  const storeKind = limits.store ?? 'memory';
  if (storeKind === 'redis' && limits.redis_url === undefined) problems.push('limits.redis_url: is required for store redis');
  if (storeKind === 'memory' && limits.redis_url !== undefined) problems.push('limits.redis_url: applies to store redis only');
  if (storeKind === 'memory' && limits.redis_key_prefix !== undefined) problems.push('limits.redis_key_prefix: applies to store redis only');
  if (limits.tenant && !document.auth) problems.push('limits.tenant: needs the AuthModule configured (an auth: section or JWT_SECRET)');
  const apiAuth = document.api?.auth ?? 'token';
  if (limits.token && apiAuth !== 'token') problems.push(`limits.token: applies to api.auth token only (api.auth is ${apiAuth})`);
  if (!limits.tenant && !limits.token && limits.enabled !== false) problems.push('limits: set tenant, token or both (or enabled: false)');
  if (problems.length) throw new ConfigError(problems.map((problem) => `${source}: ${problem}`));
  return {
    enabled: limits.enabled ?? true,
    store:
      storeKind === 'redis'
        ? { kind: 'redis', url: limits.redis_url!, keyPrefix: limits.redis_key_prefix ?? DEFAULT_LIMITS_KEY_PREFIX }
        : { kind: 'memory' },
    ...(limits.tenant ? { tenant: toRateLimit(limits.tenant) } : {}),
    ...(limits.token ? { token: toRateLimit(limits.token) } : {}),
  };
}

/** Sub-millisecond windows round up to 1 ms; the schema bounds the rest. */
function toRateLimit(section: RateLimitSection): RateLimit {
  return { limit: section.limit, windowMs: Math.max(1, Math.round(section.window * 1000)) };
}
