import { schemaExample } from './demo-schema-example';

describe('schemaExample', () => {
  it('gives an object its required properties only, each the least value its schema admits', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 6 },
        when: { type: 'string', format: 'date-time' },
        count: { type: 'integer', exclusiveMinimum: 0 },
        ratio: { type: 'number', maximum: -2 },
        kind: { enum: ['a', 'b'] },
        fixed: { const: 42 },
        chosen: { type: 'string', default: 'preset' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
        maybe: { type: ['null', 'boolean'] },
        optional: { type: 'string' },
      },
      required: ['name', 'when', 'count', 'ratio', 'kind', 'fixed', 'chosen', 'tags', 'maybe'],
    };
    expect(schemaExample(schema)).toEqual({
      name: 'demooo',
      when: '2026-01-01T00:00:00Z',
      count: 1,
      ratio: -2,
      kind: 'a',
      fixed: 42,
      chosen: 'preset',
      tags: ['demo', 'demo'],
      maybe: false,
    });
  });

  it('follows $refs, takes the first branch that is not null, and merges allOf', () => {
    const schema = {
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
      type: 'object',
      properties: {
        at: { $ref: '#/$defs/point' },
        label: { anyOf: [{ type: 'null' }, { type: 'string' }] },
        both: { allOf: [{ $ref: '#/$defs/point' }, { type: 'object', properties: { y: { type: 'boolean' } }, required: ['y'] }] },
      },
      required: ['at', 'label', 'both'],
    };
    expect(schemaExample(schema)).toEqual({ at: { x: 0 }, label: 'demo', both: { x: 0, y: false } });
  });

  it('ends a schema that requires itself in null instead of recursing forever', () => {
    const schema = { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } }, required: ['next'] } }, $ref: '#/$defs/node' };
    let depth = 0;
    for (let value = schemaExample(schema) as { next?: unknown } | null; value !== null; value = value.next as { next?: unknown } | null) depth++;
    expect(depth).toBeGreaterThan(1);
    expect(depth).toBeLessThan(20);
  });
});
