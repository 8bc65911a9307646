/**
 * Search-tool registration from the environment (docs/getting-started.md): SEARXNG_URL registers a searxng
 * tool named `web_search`, or sets the URL of a `web_search` entry the YAML already has.
 * SEARXNG_ALLOW_PRIVATE_NETWORK=true lets that URL be a loopback or private address (a local instance).
 */
import { WEB_SEARCH_TOOL } from '../ai/tools/search.service';
import type { ConfigOverride } from './config.types';

export const SEARXNG_URL_VARIABLE = 'SEARXNG_URL';
export const SEARXNG_ALLOW_PRIVATE_VARIABLE = 'SEARXNG_ALLOW_PRIVATE_NETWORK';

export function toolEnvironmentOverrides(env: NodeJS.ProcessEnv, document: Record<string, unknown>): ConfigOverride[] {
  const url = env[SEARXNG_URL_VARIABLE];
  if (url === undefined || url === '') return [];
  const path = ['tools', WEB_SEARCH_TOOL];
  const overrides: ConfigOverride[] = [];
  const configured = ((document.tools ?? {}) as Record<string, unknown>)[WEB_SEARCH_TOOL] !== undefined;
  if (!configured) overrides.push({ source: SEARXNG_URL_VARIABLE, path: [...path, 'kind'], value: 'searxng' });
  overrides.push({ source: SEARXNG_URL_VARIABLE, path: [...path, 'url'], value: url });
  const allowPrivate = env[SEARXNG_ALLOW_PRIVATE_VARIABLE];
  if (allowPrivate !== undefined && allowPrivate !== '') {
    overrides.push({ source: SEARXNG_ALLOW_PRIVATE_VARIABLE, path: [...path, 'allow_private_network'], value: allowPrivate });
  }
  return overrides;
}
