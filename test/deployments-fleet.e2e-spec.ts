/**
 * Cool-downs shared by a fleet (issue 30, docs/decisions.md B18): two real server processes on one Redis, two
 * OpenAI emulators as deployments of one alias. A 429 with `Retry-After: 2` seen by one process keeps both off
 * that deployment for 2 s; then one probe brings it back. A deployment cooled down by failures on one process
 * shows as cooling on the other in /readyz and /metrics, and in `tollgate providers --health`.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Redis from 'ioredis';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { ServerProcesses } from './support/server-process';

const ROOT = resolve(__dirname, '..');
const CLI = join(ROOT, 'bin', 'tollgate');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TOKEN = 'fleet-api-token';
const KEY = 'sk-fleet';
const CHAT = '/v1/chat/completions';
const prefix = `tollgate:test-deployments:${randomUUID()}:`;

let work: string;
let configFile: string;
let east: OpenAiEmulator;
let west: OpenAiEmulator;
const servers = new ServerProcesses();
let first: string;
let second: string;

beforeAll(async () => {
  [east, west] = await Promise.all([OpenAiEmulator.start({ apiKey: KEY }), OpenAiEmulator.start({ apiKey: KEY })]);
  work = mkdtempSync(join(tmpdir(), 'tollgate-deployments-'));
  configFile = join(work, 'tollgate.yaml');
  writeFileSync(
    configFile,
    [
      'version: 1',
      `api: { token: ${TOKEN} }`,
      'metrics: { enabled: true }',
      'ai:',
      '  retry_attempts: 2',
      '  model_aliases:',
      '    chat: { strategy: ordered, deployments: [east/gpt-test, west/gpt-test] }',
      '    solo: { deployments: [{ target: east/gpt-test, weight: 1 }] }',
      `  deployment_health: { failures: 3, window: 10, cooldown: 30, store: redis, url: "${REDIS_URL}", key_prefix: "${prefix}" }`,
      'providers:',
      `  east: { kind: openai, url: "${east.url}", api_key: ${KEY}, chat_model: gpt-test }`,
      `  west: { kind: openai, url: "${west.url}", api_key: ${KEY}, chat_model: gpt-test }`,
      '',
    ].join('\n'),
  );
  [first, second] = await Promise.all([servers.start(configFile, work, 90_000).url, servers.start(configFile, work, 90_000).url]);
}, 150_000);

afterAll(async () => {
  await servers.stopAll();
  await Promise.all([east.close(), west.close()]);
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  rmSync(work, { recursive: true, force: true });
});

async function chat(server: string, model = 'chat'): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null }> {
  const response = await fetch(`${server}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, retryAfter: response.headers.get('retry-after') };
}

describe('a fleet of two on one Redis', () => {
  it('a 429 with Retry-After: 2 seen by one process keeps both off that deployment for 2 s, then one probe brings it back', async () => {
    // Only a chat request meets it: the servers' own health probes go to other paths.
    east.server.inject({ kind: 'status', status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } }, 1, CHAT);
    // The cool-down ends 2 s after the 429 reached the first process: no sooner than 2 s after this.
    const sentAt = Date.now();
    const limited = await chat(first);
    const answeredAt = Date.now();
    expect(limited.status).toBe(200);
    // One request to east (no retry of a deployment that went cooling), then west answered.
    expect(east.server.requestsTo(CHAT)).toHaveLength(1);
    expect(west.server.requestsTo(CHAT)).toHaveLength(1);

    // Within a second, the other process knows too: `solo` (east only) is refused at once, and `chat` goes to west
    // while well inside the 2 s (on a loaded machine a call takes a while: as many as fit).
    await new Promise((done) => setTimeout(done, 600));
    const refused = await chat(second, 'solo');
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: { type: 'server_error', code: 'no_healthy_deployment' } });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(2);
    let calls = 0;
    do {
      expect((await chat(second)).status).toBe(200);
      calls++;
    } while (Date.now() - sentAt < 1500 && calls < 4);
    expect(east.server.requestsTo(CHAT)).toHaveLength(1);
    expect(west.server.requestsTo(CHAT)).toHaveLength(1 + calls);

    // Once the 2 s are surely over, east is probed by one call and takes traffic again.
    await new Promise((done) => setTimeout(done, Math.max(0, 2100 - (Date.now() - answeredAt))));
    expect((await chat(second)).status).toBe(200);
    expect(east.server.requestsTo(CHAT)).toHaveLength(2);
    expect((await chat(second)).status).toBe(200);
    expect(east.server.requestsTo(CHAT)).toHaveLength(3);
  }, 60_000);

  it('a deployment cooled down by failures on one process shows as cooling on the other: /readyz, /metrics, the CLI', async () => {
    east.server.inject({ kind: 'status', status: 503, body: { error: { message: 'overloaded', type: 'server_error', code: null } } }, 3, CHAT);
    for (let call = 0; call < 3; call++) expect((await chat(first)).status).toBe(200);
    await new Promise((done) => setTimeout(done, 600));
    const ready = (await (await fetch(`${second}/readyz`)).json()) as { details?: { deployments: Array<Record<string, unknown>> } };
    expect(ready.details?.deployments).toContainEqual(expect.objectContaining({ alias: 'chat', deployment: 'east/gpt-test', state: 'cooling' }));
    const metrics = await (await fetch(`${second}/metrics`)).text();
    expect(metrics).toContain('tollgate_deployment_cooling_down{alias="chat",deployment="east/gpt-test"} 1');
    expect(metrics).toContain('tollgate_deployment_cooling_down{alias="chat",deployment="west/gpt-test"} 0');

    const cli = spawnSync(process.execPath, [CLI, 'providers', '--health', '--json', '--config', configFile], { cwd: work, env: { PATH: process.env.PATH, NO_COLOR: '1' }, timeout: 90_000 });
    expect(cli.status).toBe(0);
    const shown = JSON.parse(cli.stdout.toString()) as { deployments: Array<Record<string, unknown>> };
    expect(shown.deployments).toContainEqual(expect.objectContaining({ alias: 'chat', deployment: 'east/gpt-test', state: 'cooling' }));
  }, 120_000);
});
