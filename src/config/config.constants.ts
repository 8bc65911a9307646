/** Injection token of the loaded TollgateConfig. */
export const TOLLGATE_CONFIG = Symbol('tollgate:config');
