/**
 * Router options under which the router would read a path otherwise than the guards do. The guards decide
 * on the path as sent, cased as sent and with `;` as a plain character (Fastify's defaults); a router that
 * ignores case or cuts at `;` could hand a request to a handler the checks never looked at
 * (`/Admin/x`, `/admin;/public/x`). Pure.
 */

interface FastifyInitialConfig {
  caseSensitive?: boolean;
  useSemicolonDelimiter?: boolean;
  routerOptions?: { caseSensitive?: boolean; useSemicolonDelimiter?: boolean };
}

/**
 * The option names to change, or an empty list. `instance` is the HTTP adapter's instance; only Fastify's
 * is read. Fastify 5 takes these from `routerOptions` or, deprecated, the top level: either one counts.
 */
export function pathMismatchingRouterOptions(instance: unknown): string[] {
  const config = (instance as { initialConfig?: FastifyInitialConfig } | undefined)?.initialConfig;
  if (config === undefined) return [];
  const router = config.routerOptions ?? {};
  const problems: string[] = [];
  if (router.caseSensitive === false || config.caseSensitive === false) problems.push('caseSensitive: false');
  if (router.useSemicolonDelimiter === true || config.useSemicolonDelimiter === true) problems.push('useSemicolonDelimiter: true');
  return problems;
}
