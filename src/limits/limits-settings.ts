/** One fixed-window rate limit: at most `limit` requests per `windowMs`. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** Where the counters live: this process, or Redis so that every instance shares them. */
export type LimitsStore = { kind: 'memory' } | { kind: 'redis'; url: string; keyPrefix: string };

/** Limits of one group of routes: for requests to its paths they replace the defaults of the scopes they set. */
export interface RouteGroupLimits {
  /** Part of the counter keys and of the 429 message. */
  name: string;
  /** skip_paths syntax (exact, `prefix/*`, `%r{regex}`), matched against the full request path. */
  paths: string[];
  tenant?: RateLimit;
  token?: RateLimit;
}

/** Request rate limits of the server (the `limits:` section); registered only when `enabled`. */
export interface LimitsSettings {
  /** True when the section turns limits on and sets at least one limit. */
  enabled: boolean;
  store: LimitsStore;
  /** Per tenant id of AuthModule's request context. */
  tenant?: RateLimit;
  /** Per API token of the /v1 API hook, keyed by the token's SHA-256 digest. */
  token?: RateLimit;
  /** In order: a request takes a scope's limit from the first group matching its path that sets it. */
  routes: RouteGroupLimits[];
}

export const DEFAULT_LIMITS_KEY_PREFIX = 'tollgate:limits:';

/** Whether any limit of the scope is configured (default or route group), i.e. whether it must be enforced. */
export function hasLimits(settings: LimitsSettings, scope: 'tenant' | 'token'): boolean {
  return settings[scope] !== undefined || settings.routes.some((group) => group[scope] !== undefined);
}

export function limitsKeyPrefix(settings: LimitsSettings): string {
  return settings.store.kind === 'redis' ? settings.store.keyPrefix : DEFAULT_LIMITS_KEY_PREFIX;
}

export const LIMITS_OFF: Readonly<LimitsSettings> = Object.freeze<LimitsSettings>({ enabled: false, store: { kind: 'memory' }, routes: [] });
