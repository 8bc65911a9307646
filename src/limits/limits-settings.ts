/** One fixed-window rate limit: at most `limit` requests per `windowMs`. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** Where the counters live: this process, or Redis so that every instance shares them. */
export type LimitsStore = { kind: 'memory' } | { kind: 'redis'; url: string; keyPrefix: string };

/** Request rate limits of the server (the `limits:` section); registered only when `enabled`. */
export interface LimitsSettings {
  /** True when the section turns limits on and sets at least one of `tenant` and `token`. */
  enabled: boolean;
  store: LimitsStore;
  /** Per tenant id of AuthModule's request context. */
  tenant?: RateLimit;
  /** Per API token of the /v1 API hook, keyed by the token's SHA-256 digest. */
  token?: RateLimit;
}

export const DEFAULT_LIMITS_KEY_PREFIX = 'tollgate:limits:';

export function limitsKeyPrefix(settings: LimitsSettings): string {
  return settings.store.kind === 'redis' ? settings.store.keyPrefix : DEFAULT_LIMITS_KEY_PREFIX;
}

export const LIMITS_OFF: Readonly<LimitsSettings> = Object.freeze<LimitsSettings>({ enabled: false, store: { kind: 'memory' } });
