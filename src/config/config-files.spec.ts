import { parse } from 'yaml';
import schema from '../../config/tollgate.schema.json';
import { DEFAULT_SERVER_CONFIG } from './config.defaults';
import { resolveReferences } from './config-references';
import { CONFIG_SCHEMA_ID, formatProblem, validateDocument } from './config-schema.validator';
import { readPackagedFile } from './packaged-files';

describe('packaged configuration files', () => {
  it('the example starts with the schema reference line and validates', () => {
    const text = readPackagedFile('config/tollgate.example.yaml');
    expect(text.split('\n')[0]).toBe(`# yaml-language-server: $schema=${CONFIG_SCHEMA_ID}`);
    const { value, problems } = resolveReferences(parse(text), { JWT_SECRET: 'x'.repeat(64) });
    expect(problems).toEqual([]);
    expect(validateDocument(value).map(formatProblem)).toEqual([]);
  });

  it("the schema's documented server defaults are the built-in ones", () => {
    const server = schema.definitions.server.properties;
    expect({
      port: server.port.default,
      host: server.host.default,
      bodyLimit: server.body_limit.default,
      basePath: server.base_path.default,
      shutdownTimeoutMs: server.shutdown_timeout.default * 1000,
    }).toEqual(DEFAULT_SERVER_CONFIG);
  });

  it('has a stable absolute $id', () => {
    expect(CONFIG_SCHEMA_ID).toMatch(/^https:\/\/[^/]+\/.+\.json$/);
  });
});
