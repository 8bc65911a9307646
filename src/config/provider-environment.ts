/**
 * Provider registration from the environment (docs/getting-started.md): `<KIND>_API_KEY`, `_URL`,
 * `_CHAT_MODEL`, `_EMBEDDING_MODEL`, `_MODEL` and `_EMBEDDING_DIMENSIONS` fill the entry named after the
 * kind, overriding the YAML. A
 * configuration with a `providers:` section names its providers itself: the variables fill those entries
 * and never add one (a key meant for `providers.gpt` with `kind: openai` must not also register a second
 * `openai` entry pointing at the public API). Without that section (no file, or a file without it) a
 * kind's registering variable creates its entry: the key for hosted kinds, the URL for openai_compatible,
 * any OLLAMA_* variable for the local server.
 */
import { PROVIDER_KINDS, type ProviderKind } from '../ai/providers/ai-provider.interface';
import type { ConfigOverride, EnvironmentProvider } from './config.types';

const FIELDS = [
  ['API_KEY', 'api_key'],
  ['URL', 'url'],
  ['CHAT_MODEL', 'chat_model'],
  ['EMBEDDING_MODEL', 'embedding_model'],
  ['MODEL', 'model'],
  ['EMBEDDING_DIMENSIONS', 'embedding_dimensions'],
] as const;

/** The generation-only kinds take no embedding settings. */
const GENERATION_ONLY = new Set<ProviderKind>(['anthropic', 'deepseek', 'xai']);

export function providerVariablePrefix(kind: ProviderKind): string {
  return kind.toUpperCase();
}

/** `OPENAI_API_KEY`, ... for every kind, e.g. for documentation and `tollgate config example`. */
export function providerVariables(kind: ProviderKind): string[] {
  return fieldsOf(kind).map(([suffix]) => `${providerVariablePrefix(kind)}_${suffix}`);
}

export interface ProviderEnvironment {
  overrides: ConfigOverride[];
  created: EnvironmentProvider[];
}

/**
 * `document` is the YAML as written; `flags` are command-line overrides, which count as configuring the
 * entry they touch (so `--provider openai --api-key K` still picks up OPENAI_URL and OPENAI_CHAT_MODEL).
 */
export function providerEnvironment(
  env: NodeJS.ProcessEnv,
  document: Record<string, unknown>,
  flags: readonly ConfigOverride[] = [],
): ProviderEnvironment {
  const namesItsProviders = document.providers !== undefined;
  const configured = new Set(Object.keys((document.providers ?? {}) as Record<string, unknown>));
  for (const flag of flags) if (flag.path[0] === 'providers' && flag.path[1] !== undefined) configured.add(flag.path[1]);
  const result: ProviderEnvironment = { overrides: [], created: [] };
  for (const kind of PROVIDER_KINDS) {
    const prefix = providerVariablePrefix(kind);
    const set = fieldsOf(kind).flatMap(([suffix, key]) => {
      const variable = `${prefix}_${suffix}`;
      const value = env[variable];
      return value === undefined || value === '' ? [] : [{ source: variable, path: ['providers', kind, key], value }];
    });
    if (set.length === 0) continue;
    const variables = set.map((o) => o.source);
    if (configured.has(kind)) result.overrides.push(...set);
    else if (!namesItsProviders && registers(kind, variables)) {
      result.overrides.push(...set);
      result.created.push({ name: kind, variables });
    }
  }
  return result;
}

function registers(kind: ProviderKind, variables: string[]): boolean {
  const prefix = providerVariablePrefix(kind);
  if (kind === 'ollama') return variables.length > 0;
  // A project and location, or a region, are needed first: these kinds are registered in the YAML only.
  if (kind === 'vertex' || kind === 'bedrock') return false;
  if (kind === 'openai_compatible') return variables.includes(`${prefix}_URL`);
  return variables.includes(`${prefix}_API_KEY`);
}

function fieldsOf(kind: ProviderKind) {
  return FIELDS.filter(([suffix]) => {
    if (kind === 'ollama' && suffix === 'API_KEY') return false;
    return !(GENERATION_ONLY.has(kind) && suffix.startsWith('EMBEDDING'));
  });
}
