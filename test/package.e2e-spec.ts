import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { sign } from 'jsonwebtoken';
import { markdownParts } from './support/markdown';
import { ServerProcesses } from './support/server-process';
import { dropRedisKeys } from './support/store-cleanup';

/**
 * The npm package as another project gets it. `npm pack` runs in a copy of the working tree without dist/ (what
 * a fresh clone holds), so `prepack` must build; the tarball's file list and size are checked, `npm publish
 * --dry-run` accepts it, and it is unpacked into two fresh Nest 11 apps, one on Express and one on Fastify, that
 * compile and run the AuthModule example of docs/auth.md against Redis.
 *
 * The apps are not filled by `npm install`: it took 93 s per app on the development machine, since npm fetches
 * the metadata of every package from the registry (`npm ci` caches tarballs only). Instead each app gets the
 * unpacked tarball, the tarball's declared dependencies linked into its own node_modules, and at the app's top
 * level only the peers, the app's platform and @types/node, linked from this repository's node_modules (so one
 * copy of each, as npm would place them). Tollgate's code can therefore resolve only what its package.json
 * declares or the peers provide.
 */

const ROOT = resolve(__dirname, '..');
const MODULES = realpathSync(join(ROOT, 'node_modules'));
const run = promisify(execFile);
const REDIS_URL = 'redis://127.0.0.1:6379';
const SECRET = 'package-e2e-secret-that-is-longer-than-32-bytes';
const RBAC_RECORD = { permissions: { sales: ['sales/*:get'] } };
/** The docs' example uses the default namespaces, so the suite removes their keys when it ends. */
const RBAC_KEY_PREFIXES = ['tollgate:rbac:', 'tollgate:perm:'];

interface PackedFile {
  path: string;
  size: number;
}
interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: PackedFile[];
}
interface Manifest {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  exports: Record<string, unknown>;
}

const work = mkdtempSync(join(tmpdir(), 'tollgate-package-'));
let packed: PackResult;
let tarball: string;
let manifest: Manifest;
/** Each host app's directory, once built. */
const hostApps = new Map<Platform, string>();

/** The working tree's files as git sees them (tracked and new, not ignored): a clone of what would be committed. */
function copyWorkingTree(target: string): void {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  for (const file of listed.split('\0').filter(Boolean)) {
    const source = join(ROOT, file);
    if (!existsSync(source)) continue; // deleted in the working tree, not yet committed
    mkdirSync(dirname(join(target, file)), { recursive: true });
    cpSync(source, join(target, file));
  }
  symlinkSync(MODULES, join(target, 'node_modules'));
}

/** `node_modules/<name>` in `modulesDir` as a link to this repository's copy. */
function linkPackage(modulesDir: string, name: string): void {
  const source = join(MODULES, name);
  if (!existsSync(source)) throw new Error(`${name} is not installed in this repository (run npm ci)`);
  mkdirSync(dirname(join(modulesDir, name)), { recursive: true });
  symlinkSync(source, join(modulesDir, name));
}

/** The TypeScript block under "AuthModule in another Nest app" in docs/auth.md, as a host would paste it. */
function docsAuthExample(): string {
  const markdown = readFileSync(join(ROOT, 'docs', 'auth.md'), 'utf8');
  const heading = markdown.split('\n').findIndex((line) => line === '## AuthModule in another Nest app') + 1;
  const block = markdownParts(markdown).blocks.find((candidate) => candidate.language === 'ts' && candidate.line > heading);
  if (heading === 0 || !block) throw new Error('docs/auth.md has no TypeScript example under "AuthModule in another Nest app"');
  return block.code;
}

type Platform = 'express' | 'fastify';

const BOOTSTRAP: Record<Platform, string> = {
  express: `import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { RbacService } from 'tollgate/auth';
import { AppModule } from './app.module';

async function bootstrap() {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { logger: ['error', 'warn'] });
  await app.init();
  await app.get(RbacService).setRecord(JSON.parse(process.env.RBAC_RECORD!));
  await app.listen(0, '127.0.0.1');
  console.log(\`listening on \${await app.getUrl()}\`);
}
void bootstrap();
`,
  fastify: `import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { RbacService } from 'tollgate/auth';
import { AppModule } from './app.module';

async function bootstrap() {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger: ['error', 'warn'] });
  await app.init();
  await app.get(RbacService).setRecord(JSON.parse(process.env.RBAC_RECORD!));
  await app.listen(0, '127.0.0.1');
  console.log(\`listening on \${await app.getUrl()}\`);
}
void bootstrap();
`,
};

/**
 * A fresh host app in `work/<platform>-app`: the tarball unpacked as node_modules/tollgate, the peers and the
 * platform beside it, compiled with this repository's TypeScript. The Express app compiles with CommonJS
 * resolution (subpaths through `typesVersions`), the Fastify app with `nodenext` (through `exports`).
 */
async function buildHostApp(platform: Platform): Promise<string> {
  const app = join(work, `${platform}-app`);
  const modules = join(app, 'node_modules');
  mkdirSync(join(app, 'src'), { recursive: true });
  mkdirSync(modules);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `${platform}-host`, private: true }));
  execFileSync('tar', ['-xzf', tarball, '-C', modules]);
  renameSync(join(modules, 'package'), join(modules, 'tollgate'));
  for (const name of Object.keys(manifest.dependencies)) linkPackage(join(modules, 'tollgate', 'node_modules'), name);
  for (const name of [...Object.keys(manifest.peerDependencies), `@nestjs/platform-${platform}`, '@types/node']) {
    if (!existsSync(join(modules, name))) linkPackage(modules, name);
  }
  const resolution = platform === 'express' ? { module: 'commonjs' } : { module: 'nodenext', moduleResolution: 'nodenext' };
  const compilerOptions = {
    ...resolution,
    target: 'ES2022',
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    skipLibCheck: true,
    outDir: 'dist',
    rootDir: 'src',
    types: ['node'],
  };
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }));
  writeFileSync(join(app, 'src', 'app.module.ts'), docsAuthExample());
  writeFileSync(join(app, 'src', 'main.ts'), BOOTSTRAP[platform]);
  await run(process.execPath, [join(MODULES, 'typescript', 'bin', 'tsc'), '-p', app], { cwd: app });
  return app;
}

/** What a fresh `node` process loads for `require(specifier)` in `cwd`, and the CPU time it took. */
function loadIn(cwd: string, specifier: string): { files: string[]; cpuMs: number } {
  const script = `const before = process.cpuUsage();
require(${JSON.stringify(specifier)});
const used = process.cpuUsage(before);
process.stdout.write(JSON.stringify({ files: Object.keys(require.cache), cpuMs: (used.user + used.system) / 1000 }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8' }));
}

beforeAll(async () => {
  const clone = join(work, 'clone');
  copyWorkingTree(clone);
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: clone, maxBuffer: 64 * 1024 * 1024 });
  // prepack's build writes its banner to the same stdout before npm's JSON.
  packed = (JSON.parse(stdout.slice(stdout.search(/^\[/m))) as PackResult[])[0];
  tarball = join(work, packed.filename);
  manifest = JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8'));
}, 600_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('npm pack from a fresh clone', () => {
  it('builds on prepack and packs the built code, the CLI, the schema, the example config and the price table', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'bin/tollgate',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/src/auth/index.js',
        'dist/src/auth/index.d.ts',
        'dist/src/ai/index.js',
        'dist/src/ai/index.d.ts',
        'dist/src/main.js',
        'dist/src/cli.js',
        'dist/config/tollgate.schema.json',
        'config/tollgate.schema.json',
        'config/tollgate.example.yaml',
        'config/pricing.default.json',
      ]),
    );
    // Only those: no sources, tests, fixtures, source maps, benchmarks, scripts or local configuration.
    const unexpected = paths.filter(
      (path) =>
        !['package.json', 'README.md', 'bin/tollgate', 'dist/config/tollgate.schema.json'].includes(path) &&
        !/^config\/(tollgate\.schema\.json|tollgate\.example\.yaml|pricing\.default\.json)$/.test(path) &&
        !/^dist\/src\/.+(?<!\.spec)\.(js|d\.ts)$/.test(path),
    );
    expect(unexpected).toEqual([]);
    expect(paths.filter((path) => /\.map$|\.spec\.|fixtures|emulators/.test(path))).toEqual([]);
  });

  it('stays small: under 1 MB packed and 3 MB unpacked', () => {
    // 2026-11-28: 546 kB packed, 2.09 MB unpacked, 699 files.
    expect(packed.size).toBeLessThan(1_000_000);
    expect(packed.unpackedSize).toBeLessThan(3_000_000);
  });

  it('points every export and the bin at a packed file', () => {
    const paths = new Set(packed.files.map((file) => file.path));
    const targets = Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target as object)));
    for (const target of [...targets, './bin/tollgate']) expect(paths).toContain(String(target).replace(/^\.\//, ''));
  });

  it('leaves the Nest packages that must be shared with the host to the host (peers, not dependencies)', () => {
    const peers = ['@nestjs/common', '@nestjs/core', '@nestjs/event-emitter', '@nestjs/platform-fastify', 'reflect-metadata', 'rxjs'];
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(peers);
    expect(Object.keys(manifest.dependencies).filter((name) => peers.includes(name))).toEqual([]);
  });

  it('passes npm publish --dry-run', async () => {
    const { stdout, stderr } = await run('npm', ['publish', '--dry-run', '--json', tarball], { cwd: work, maxBuffer: 64 * 1024 * 1024 });
    expect(JSON.parse(stdout)[manifest.name]).toMatchObject({ name: manifest.name, version: manifest.version });
    // npm corrects a malformed manifest silently on publish and says so only here.
    expect(stderr).not.toMatch(/auto-corrected|invalid/i);
  }, 120_000);
});

describe.each<Platform>(['express', 'fastify'])('the docs AuthModule example in a fresh Nest 11 app on %s', (platform) => {
  const processes = new ServerProcesses();
  let app: string;
  let base: URL;

  beforeAll(async () => {
    app = await buildHostApp(platform);
    hostApps.set(platform, app);
    const server = processes.startNode([join(app, 'dist', 'main.js')], app, {
      env: { JWT_SECRET: SECRET, RBAC_RECORD: JSON.stringify(RBAC_RECORD) },
    });
    base = new URL(await server.url);
  }, 300_000);

  afterAll(async () => {
    await processes.stopAll();
    for (const prefix of RBAC_KEY_PREFIXES) await dropRedisKeys(REDIS_URL, prefix);
  });

  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const token = (claims: Record<string, unknown> = {}, secret = SECRET) =>
    sign(
      { sub: 'user-42', tenant_id: 't-1', subdomain: 'acme', pathname_slugs: ['north'], role_ids: ['sales'], exp: nowSeconds() + 600, ...claims },
      secret,
      { algorithm: 'HS256' },
    );

  /** A GET over a real socket with the tenant's host name, as a browser on acme.example.com would send it. */
  function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    return new Promise((resolvePromise, reject) => {
      const req = httpRequest(
        { host: base.hostname, port: base.port, path, headers: { host: 'acme.example.com', ...headers } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }
  const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

  it('answers a valid token of the right tenant, slug and role with the claims the decorators read', async () => {
    const reply = await get('/api/v1/north/sales/invoices', bearer(token()));
    expect(reply).toEqual({ status: 200, body: { userId: 'user-42', tenantId: 't-1', slugs: ['north'] } });
  });

  /** The status and the denial code of a refused request. */
  const denial = async (path: string, headers: Record<string, string> = {}) => {
    const reply = await get(path, headers);
    return { status: reply.status, code: reply.body?.code };
  };

  it('refuses a missing, forged or expired token with 401', async () => {
    expect(await denial('/api/v1/north/sales/invoices')).toEqual({ status: 401, code: 'missing_token' });
    expect(await denial('/api/v1/north/sales/invoices', bearer(token({}, `${SECRET}-forged`)))).toEqual({ status: 401, code: 'invalid_signature' });
    expect(await denial('/api/v1/north/sales/invoices', bearer(token({ exp: nowSeconds() - 60 })))).toEqual({ status: 401, code: 'token_expired' });
  });

  it('refuses another subdomain and a slug the token does not hold with 403', async () => {
    const otherHost = { ...bearer(token()), host: 'other.example.com' };
    expect(await denial('/api/v1/north/sales/invoices', otherHost)).toEqual({ status: 403, code: 'subdomain_mismatch' });
    expect(await denial('/api/v1/south/sales/invoices', bearer(token()))).toEqual({ status: 403, code: 'slug_denied' });
  });

  it('refuses a role without the permission in the Redis RBAC record with 403', async () => {
    expect(await denial('/api/v1/north/sales/invoices', bearer(token({ role_ids: ['support'] })))).toEqual({ status: 403, code: 'rbac_denied' });
  });

  it('lets @SkipAuth() routes through without a token', async () => {
    expect(await get('/api/v1/north/status')).toEqual({ status: 200, body: { ok: true } });
  });
});

// The tarball is the same in both apps: what its entries load and its CLI are checked once, in the Express app.
describe('the installed package in the Express app', () => {
  let app: string;
  beforeAll(() => {
    app = hostApps.get('express')!;
  });

  it('runs the installed CLI, which finds its packaged files', async () => {
    const cli = join(app, 'node_modules', 'tollgate', 'bin', 'tollgate');
    const version = await run(process.execPath, [cli, '--version'], { cwd: app });
    expect(version.stdout.trim()).toBe(manifest.version);
    const example = await run(process.execPath, [cli, 'config', 'example'], { cwd: app });
    expect(example.stdout).toBe(readFileSync(join(ROOT, 'config', 'tollgate.example.yaml'), 'utf8'));
  }, 120_000);

  it('loads no AI, governance, MCP, database or Fastify code for tollgate/auth, in a fraction of the root entry time; tollgate/ai loads the AiModule', () => {
    const auth = loadIn(app, 'tollgate/auth');
    const tollgateFiles = auth.files.filter((file) => file.includes(join('node_modules', 'tollgate', 'dist')));
    expect(tollgateFiles.length).toBeGreaterThan(0);
    expect(tollgateFiles.filter((file) => /[/\\]dist[/\\]src[/\\](ai|governance|cli|server|demo)[/\\]/.test(file))).toEqual([]);
    expect(
      auth.files.filter((file) =>
        /node_modules[/\\](@modelcontextprotocol|@electric-sql|pg|pg-pool|memjs|@redis|ioredis|@nestjs[/\\]platform-fastify|fastify|@nestjs[/\\]swagger)[/\\]/.test(file),
      ),
    ).toEqual([]);
    const aiModule = (files: string[]) => files.some((file) => /[/\\]tollgate[/\\]dist[/\\]src[/\\]ai[/\\]ai\.module\.js$/.test(file));
    expect(aiModule(loadIn(app, 'tollgate/ai').files)).toBe(true);
    const root = loadIn(app, 'tollgate');
    expect(aiModule(root.files)).toBe(true);
    // 2026-11-28 (development machine, busy): ~0.5 s of CPU for tollgate/auth against ~2.2 s for the root entry.
    expect(auth.cpuMs).toBeLessThan(root.cpuMs / 2);
  }, 120_000);
});
