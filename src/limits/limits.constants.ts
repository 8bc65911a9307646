/** Injection token of the server's LimitsSettings. */
export const LIMITS_SETTINGS = Symbol('tollgate:limits-settings');

/** Injection token of the counters' ThrottlerStorage (memory or Redis). */
export const LIMITS_STORAGE = Symbol('tollgate:limits-storage');
