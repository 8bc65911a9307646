/** Injection token of the server's LimitsSettings. */
export const LIMITS_SETTINGS = Symbol('tollgate:limits-settings');
