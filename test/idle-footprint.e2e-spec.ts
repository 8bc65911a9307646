/**
 * The default server's idle footprint (issue 29, part 5): started with no configuration at all, it loads none
 * of the modules that only other configurations use, and its RSS and heap stay under stated bounds.
 *
 * Bounds, with headroom over what was measured on Node 20.20 (2026-11-28, bench/RESULTS.md): idle RSS was
 * 140-146 MiB (150-158 before the lazy loads), heap used after a full GC 33-35 MiB (48 before). The heap
 * bound is the sharp one: loading MCP's SDK or a Redis client again adds 5-15 MiB to it, while RSS moves with
 * V8's young generation (2 x 16 MiB, sized for throughput) as much as with what is loaded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildDistIfStale } from './support/cli-run';
import { ServerProcesses } from './support/server-process';

const ROOT = resolve(__dirname, '..');
const MiB = 2 ** 20;
const IDLE_RSS_BOUND = 165 * MiB;
const IDLE_HEAP_BOUND = 45 * MiB;
/** Packages the default configuration (memory stores, MCP off, no auth section) must not load. */
const UNUSED_BY_DEFAULT = ['@modelcontextprotocol/sdk', 'zod', 'hono', 'ioredis', '@nest-lab/throttler-storage-redis', '@electric-sql/pglite', 'pg', 'google-auth-library', '@aws-sdk/credential-provider-node', '@smithy/signature-v4', '@smithy/core'];

interface Footprint {
  rss: number;
  heapUsed: number;
  packages: string[];
}

const servers = new ServerProcesses();
let cwd: string;
beforeAll(() => {
  buildDistIfStale();
  // An empty directory: no config/tollgate.yaml is found, so the server runs on its defaults.
  cwd = mkdtempSync(join(tmpdir(), 'tollgate-footprint-'));
}, 180_000);
afterAll(async () => {
  await servers.stopAll();
  rmSync(cwd, { recursive: true, force: true });
});

async function idleFootprint(): Promise<Footprint> {
  const server = servers.startNode(['--expose-gc', '--require', join(ROOT, 'test', 'support', 'footprint-probe.js'), join(ROOT, 'dist', 'src', 'main.js'), '--port', '0'], cwd);
  await server.url;
  // Idle: a few seconds after start, no request made.
  await new Promise((settled) => setTimeout(settled, 3_000));
  server.child.kill('SIGWINCH');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const line = /footprint (\{.*\})\n/.exec(server.output());
    if (line) return JSON.parse(line[1]) as Footprint;
    if (Date.now() > deadline) throw new Error(`no footprint reported:\n${server.output()}`);
    await new Promise((later) => setTimeout(later, 100));
  }
}

it('the default server loads no module of an unused configuration and idles under its RSS and heap bounds', async () => {
  const footprint = await idleFootprint();
  // The probe sees what the server loaded: the packages every configuration needs are there.
  expect(footprint.packages).toEqual(expect.arrayContaining(['@nestjs/core', 'fastify', 'undici', 'prom-client']));
  expect(footprint.packages.filter((name) => UNUSED_BY_DEFAULT.includes(name))).toEqual([]);
  expect(footprint.heapUsed).toBeLessThan(IDLE_HEAP_BOUND);
  expect(footprint.rss).toBeLessThan(IDLE_RSS_BOUND);
}, 120_000);
