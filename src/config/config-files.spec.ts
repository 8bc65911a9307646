import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import schema from '../../config/tollgate.schema.json';
import { DEFAULT_SERVER_CONFIG } from './config.defaults';
import { resolveReferences } from './config-references';
import { CONFIG_SCHEMA_ID, CONFIG_SCHEMA_MODELINE, formatProblem, validateDocument } from './config-schema.validator';
import { loadConfig } from './config.loader';
import { packageRoot, readPackagedFile } from '../common/packaged-files';
import { checkServerStart } from './server-start-checks';

describe('packaged configuration files', () => {
  it('the example starts with the schema reference line and validates as printed, with no environment', () => {
    const text = readPackagedFile('config/tollgate.example.yaml');
    expect(text.split('\n')[0]).toBe(CONFIG_SCHEMA_MODELINE);
    const { value, problems } = resolveReferences(parse(text), {});
    expect(problems).toEqual([]);
    expect(validateDocument(value).map(formatProblem)).toEqual([]);
    expect((value as Record<string, unknown>).auth).toBeUndefined();
  });

  it("the example's commented auth section validates and starts once uncommented and JWT_SECRET is set", async () => {
    const lines = readPackagedFile('config/tollgate.example.yaml').split('\n');
    const first = lines.indexOf('# auth:');
    const end = lines.findIndex((line, index) => index > first && !line.startsWith('#'));
    const uncommented = [...lines.slice(0, first), ...lines.slice(first, end).map((line) => line.replace(/^# ?/, '')), ...lines.slice(end)];
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-example-'));
    try {
      writeFileSync(join(dir, 'tollgate.yaml'), uncommented.join('\n'));
      const env = { JWT_SECRET: 'x'.repeat(64) };
      const config = loadConfig({ cwd: dir, configPath: 'tollgate.yaml', env });
      expect(config.auth).toMatchObject({ jwtSecret: env.JWT_SECRET, validateSubdomain: false, rbacCacheStore: 'redis' });
      await expect(checkServerStart(config, env)).resolves.toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the schema's documented server defaults are the built-in ones", () => {
    const server = schema.definitions.server.properties;
    expect({
      port: server.port.default,
      host: server.host.default,
      bodyLimit: server.body_limit.default,
      chatBodyLimit: server.chat_body_limit.default,
      jsonValueLimit: server.json_value_limit.default,
      basePath: server.base_path.default,
      shutdownTimeoutMs: server.shutdown_timeout.default * 1000,
      shutdownGraceMs: server.shutdown_grace.default * 1000,
    }).toEqual(DEFAULT_SERVER_CONFIG);
  });

  it('names itself by a URN, not by an address on a domain the project does not own', () => {
    expect(CONFIG_SCHEMA_ID).toBe('urn:tollgate:config:v1');
  });

  it("the example's schema line names the packaged schema beside it", () => {
    const schemaPath = CONFIG_SCHEMA_MODELINE.split('$schema=')[1];
    expect(existsSync(join(packageRoot(), 'config', schemaPath))).toBe(true);
  });
});
