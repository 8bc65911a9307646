import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import schema from '../../config/tollgate.schema.json';
import { formatKeyPath } from './config.error';

/** The packaged schema's `$id`, a name rather than an address: `config validate` reports it. */
export const CONFIG_SCHEMA_ID: string = schema.$id;
/**
 * The example's first line: editors resolve the path from the YAML file, and the packaged example sits
 * beside the schema (config/ in the package and in the image).
 */
export const CONFIG_SCHEMA_MODELINE = '# yaml-language-server: $schema=./tollgate.schema.json';

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (!compiled) {
    // coerceTypes: values that arrive as strings (${VAR} references, environment variables) become
    // the integers and booleans the schema asks for; anything that does not convert is still an error.
    const ajv = new Ajv({ allErrors: true, coerceTypes: true, strict: true, strictRequired: false, allowUnionTypes: true, verbose: true });
    addFormats(ajv, ['regex']);
    compiled = ajv.compile(schema);
  }
  return compiled;
}

export interface SchemaProblem {
  /** Key path as segments, e.g. ['auth', 'jwt_algorithm']. */
  path: string[];
  /** Human message without the path, e.g. `must be one of HS256, HS384`. */
  message: string;
}

/** Validates (and type-coerces, in place) a configuration document against config/tollgate.schema.json. */
export function validateDocument(document: unknown): SchemaProblem[] {
  const validate = validator();
  if (validate(document)) return [];
  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    // The `if` keyword only says "the then-branch failed"; the branch's own error is reported too.
    if (error.keyword === 'if') continue;
    // A bad key name is reported once, by its propertyNames error, not again by the inner pattern check.
    if (error.propertyName !== undefined) continue;
    const problem = describe(error);
    const key = `${problem.path.join('\u0000')}\u0001${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

export function formatProblem(problem: SchemaProblem): string {
  return `${formatKeyPath(problem.path)}: ${problem.message}`;
}

function describe(error: ErrorObject): SchemaProblem {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      return { path: [...path, key], message: unknownKeyMessage(key, error.parentSchema) };
    }
    case 'required':
      return { path: [...path, String(params.missingProperty)], message: requiredMessage(path, error) };
    case 'propertyNames':
      if (path[path.length - 1] === 'headers') return { path, message: `header name "${String(params.propertyName)}" is not a valid HTTP header name` };
      return { path, message: `${path[0] === 'tools' ? 'tool' : 'provider'} name "${String(params.propertyName)}" must use letters, digits, "_" or "-"` };
    case 'enum':
      return { path, message: `must be one of ${(params.allowedValues as unknown[]).join(', ')}` };
    case 'const':
      return { path, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'type':
      return { path, message: `must be ${article(String(params.type))}` };
    case 'pattern':
      return { path, message: patternMessage(path) };
    case 'format':
      return { path, message: params.format === 'regex' ? 'must be a valid regular expression' : `must be a valid ${params.format}` };
    default:
      return { path, message: error.message ?? 'is invalid' };
  }
}

function requiredMessage(path: string[], error: ErrorObject): string {
  if (path[path.length - 1] === 'auth' && error.schemaPath.includes('/then/')) return 'is required when rbac_enabled is true';
  return 'is required';
}

function patternMessage(path: string[]): string {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (last === 'base_path') return 'must be empty or a path like /gateway (no trailing slash)';
  if (last === 'tenant_id_header_name') return 'must be a valid HTTP header name';
  if (last === 'url' && (path[0] === 'providers' || path[0] === 'tools')) return 'must be an http:// or https:// URL';
  if (last === 'endpoint' && path[0] === 'observability') return 'must be an http:// or https:// URL';
  if (last === 'url' && path[0] === 'vector') return 'must be a postgres:// or postgresql:// URL';
  if (last === 'table' && path[0] === 'vector') return 'must be a lower-case SQL identifier (a-z, digits, underscore; at most 40 characters)';
  if (last === 'url') return 'must be a URL such as redis://host:6379 or postgres://user@host/db';
  if (last === 'table') return 'must be a plain SQL identifier (letters, digits, underscore)';
  if (parent === 'servers') return 'must be host:port';
  return 'has an invalid format';
}

function article(type: string): string {
  const names = type.split(',').map((name) => (name === 'integer' ? 'an integer' : name === 'array' || name === 'object' ? `an ${name}` : `a ${name}`));
  return names.join(' or ');
}

function unknownKeyMessage(key: string, parentSchema: unknown): string {
  const known = Object.keys((parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
  const close = known.filter((candidate) => distance(candidate, key) <= 2).sort((a, b) => distance(a, key) - distance(b, key));
  const hint = close.length ? ` (did you mean ${close[0]}?)` : known.length ? ` (known keys: ${known.join(', ')})` : '';
  return `unknown key${hint}`;
}

/** Levenshtein distance, for "did you mean" hints on misspelt keys. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length];
}
