/** Injection token of the AiModule options. */
export const AI_MODULE_OPTIONS = Symbol('tollgate:ai-module-options');
/** API version reported by /v1/version; bumped only with a new path prefix. */
export const API_VERSION = '1';
