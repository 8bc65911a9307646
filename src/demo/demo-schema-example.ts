/**
 * The smallest value a JSON Schema admits, for the demo provider's tool arguments and structured answers: a
 * `const`, the `default`, the first `enum` value, the first branch of `anyOf`/`oneOf` that is not `null`, every
 * schema of `allOf` merged, an object's required properties only, an array's `minItems` items, and the
 * least string or number its bounds allow. `$ref`s into the same document (`#/$defs/...`, `#/definitions/...`)
 * are followed, the depth is bounded (a recursive schema ends in `null`), and `pattern` is not honoured: the
 * demo answers what the schemas SDKs make from zod and friends admit, not every schema there is.
 */
type Schema = Record<string, unknown>;

const MAX_DEPTH = 16;
const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'demo@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
};

export function schemaExample(schema: unknown): unknown {
  return exampleOf(schema, isSchema(schema) ? schema : {}, 0);
}

function exampleOf(schema: unknown, root: Schema, depth: number): unknown {
  if (!isSchema(schema) || depth > MAX_DEPTH) return null;
  if (typeof schema.$ref === 'string') return exampleOf(resolveRef(schema.$ref, root), root, depth + 1);
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) return exampleOf(branches.find((branch) => !isNullSchema(branch)) ?? branches[0], root, depth + 1);
  if (Array.isArray(schema.allOf)) return mergedExample(schema.allOf, root, depth);
  switch (typeOf(schema)) {
    case 'object':
      return objectExample(schema, root, depth);
    case 'array':
      return Array.from({ length: nonNegative(schema.minItems) }, () => exampleOf(schema.items, root, depth + 1));
    case 'string':
      return stringExample(schema);
    case 'integer':
      return Math.ceil(numberFloor(schema));
    case 'number':
      return numberFloor(schema);
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/** The declared type, the first one that is not `null` of a list, or what the keywords imply. */
function typeOf(schema: Schema): string | undefined {
  const declared = Array.isArray(schema.type) ? (schema.type.find((type) => type !== 'null') ?? schema.type[0]) : schema.type;
  if (typeof declared === 'string') return declared;
  if (isSchema(schema.properties)) return 'object';
  if ('items' in schema) return 'array';
  return undefined;
}

function objectExample(schema: Schema, root: Schema, depth: number): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]).filter((name): name is string => typeof name === 'string') : [];
  return Object.fromEntries(required.map((name) => [name, exampleOf(properties[name] ?? {}, root, depth + 1)]));
}

function mergedExample(schemas: unknown[], root: Schema, depth: number): unknown {
  const parts = schemas.map((part) => exampleOf(part, root, depth + 1));
  return parts.every(isSchema) ? Object.assign({}, ...parts) : parts[0];
}

function stringExample(schema: Schema): string {
  const base = (typeof schema.format === 'string' && FORMAT_EXAMPLES[schema.format]) || 'demo';
  const minLength = nonNegative(schema.minLength);
  const padded = base.length < minLength ? base.padEnd(minLength, 'o') : base;
  return typeof schema.maxLength === 'number' ? padded.slice(0, Math.max(schema.maxLength, minLength)) : padded;
}

/** 0 where the bounds admit it, else the least admitted value (an exclusive bound plus one). */
function numberFloor(schema: Schema): number {
  if (typeof schema.minimum === 'number' && schema.minimum > 0) return schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number' && schema.exclusiveMinimum >= 0) return schema.exclusiveMinimum + 1;
  if (typeof schema.maximum === 'number' && schema.maximum < 0) return schema.maximum;
  if (typeof schema.exclusiveMaximum === 'number' && schema.exclusiveMaximum <= 0) return schema.exclusiveMaximum - 1;
  return 0;
}

function resolveRef(ref: string, root: Schema): unknown {
  if (!ref.startsWith('#')) return undefined;
  let target: unknown = root;
  for (const segment of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
    target = isSchema(target) ? target[key] : undefined;
  }
  return target;
}

function isNullSchema(schema: unknown): boolean {
  return isSchema(schema) && schema.type === 'null';
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonNegative(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : 0;
}
