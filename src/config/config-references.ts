import { formatKeyPath } from './config.error';

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `$${` (escape), `${VAR}` or `${VAR:-fallback}`. */
const REFERENCE = /\$\$\{|\$\{([^}:]*)(?::-([^}]*))?\}/g;
const ENV_SUFFIX = '_env';

export interface ReferenceResult {
  value: unknown;
  /** `<key.path>: <message>` lines; empty when every reference resolved. */
  problems: string[];
}

/**
 * Resolves the two reference forms of a configuration document:
 * - `<key>_env: VAR` sets `<key>` from VAR; an unset or empty VAR leaves `<key>` unset, so its default applies;
 * - `${VAR}` / `${VAR:-fallback}` inside any string; an unset VAR without fallback is an error.
 * Returns a new value; messages name variables, never their values.
 */
export function resolveReferences(document: unknown, env: NodeJS.ProcessEnv): ReferenceResult {
  const problems: string[] = [];
  const value = resolveNode(document, [], env, problems);
  return { value, problems };
}

function resolveNode(node: unknown, path: string[], env: NodeJS.ProcessEnv, problems: string[]): unknown {
  if (typeof node === 'string') return resolveString(node, path, env, problems);
  if (Array.isArray(node)) return node.map((item, index) => resolveNode(item, [...path, String(index)], env, problems));
  if (node === null || typeof node !== 'object') return node;

  const source = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(source)) {
    if (!key.endsWith(ENV_SUFFIX) || key.length === ENV_SUFFIX.length) {
      out[key] = resolveNode(raw, [...path, key], env, problems);
      continue;
    }
    const target = key.slice(0, -ENV_SUFFIX.length);
    const where = formatKeyPath([...path, key]);
    if (typeof raw !== 'string' || !VARIABLE_NAME.test(raw)) {
      problems.push(`${where}: must name an environment variable (letters, digits, underscore)`);
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(source, target)) {
      problems.push(`${where}: set either ${target} or ${key}, not both`);
      continue;
    }
    const fromEnv = env[raw];
    if (fromEnv !== undefined && fromEnv !== '') out[target] = fromEnv;
  }
  return out;
}

function resolveString(text: string, path: string[], env: NodeJS.ProcessEnv, problems: string[]): string {
  return text.replace(REFERENCE, (match, name: string | undefined, fallback: string | undefined) => {
    if (match === '$${') return '${';
    const variable = name ?? '';
    if (!VARIABLE_NAME.test(variable)) {
      problems.push(`${formatKeyPath(path)}: \${${variable}} is not a valid environment variable reference`);
      return match;
    }
    const fromEnv = env[variable];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    if (fallback !== undefined) return fallback;
    problems.push(`${formatKeyPath(path)}: environment variable ${variable} is not set (use \${${variable}:-fallback} for a default)`);
    return match;
  });
}
