/**
 * Scale-out: two real server processes (node dist/src/main.js) on one Redis, with the CLI as a third
 * process. An RBAC record written by `tollgate rbac load` is enforced by both servers within a second
 * (both ways: revoked, then granted again), a tenant's rate-limit counter is shared, and an MCP session
 * opened on one server is used and ended on the other.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Redis from 'ioredis';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { ServerProcesses } from './support/server-process';

const ROOT = resolve(__dirname, '..');
const CLI = join(ROOT, 'bin', 'tollgate');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECRET = 'scale-out-secret-0123456789abcdef-0123456789';
const MCP_TOKEN = 'mcp-token-for-scale-out';
const TENANT_LIMIT = 8;
/** The record refresh interval of RbacService: the bound on how long a process serves a superseded record. */
const RECORD_REFRESH_MS = 1000;

const run = randomUUID();
const recordKey = `scale-${run}`;
const limitsPrefix = `tollgate:test-scale:${run}:limits:`;
const mcpPrefix = `tollgate:test-scale:${run}:mcp:`;

let work: string;
let configFile: string;
const servers = new ServerProcesses();
let first: string;
let second: string;

function startServer(): Promise<string> {
  return servers.start(configFile, work, 20000).url;
}

function writeRecordFile(permissions: Record<string, string[]>): string {
  const file = join(work, `record-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify({ permissions }));
  return file;
}

const CLI_OPTIONS = () => ({ cwd: work, env: { PATH: process.env.PATH, NO_COLOR: '1' } });

/** `tollgate rbac load` as its own process, on the servers' configuration. */
function loadRecord(permissions: Record<string, string[]>): void {
  const result = spawnSync(process.execPath, [CLI, 'rbac', 'load', writeRecordFile(permissions), '--config', configFile], { ...CLI_OPTIONS(), timeout: 20_000 });
  expect({ status: result.status, stderr: result.stderr.toString() }).toEqual({ status: 0, stderr: '' });
}

/**
 * The same, while both servers keep answering a tenant-less caller (not rate-limited), so each holds a freshly read record and a warm
 * grant in process memory when the new record lands; resolves when the CLI has exited.
 */
async function loadRecordUnderLoad(permissions: Record<string, string[]>): Promise<void> {
  const cli = spawn(process.execPath, [CLI, 'rbac', 'load', writeRecordFile(permissions), '--config', configFile], { ...CLI_OPTIONS(), stdio: 'ignore' });
  let exitCode: number | null | undefined;
  cli.on('exit', (code) => (exitCode = code));
  while (exitCode === undefined) await Promise.all([context(first), context(second)]);
  expect(exitCode).toBe(0);
}

const base64url = (value: string) => Buffer.from(value).toString('base64url');

function sign(claims: Record<string, unknown>): string {
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 600 }))}`;
  return `${head}.${createHmac('sha256', SECRET).update(head).digest('base64url')}`;
}

/** Without a tenant id the request is authorized by RBAC but not counted by the tenant limit. */
function jwtFor(tenantId: string | undefined): string {
  return sign({ user_id: 11, ...(tenantId ? { tenant_id: tenantId } : {}), role_ids: ['analyst'] });
}

async function context(server: string, tenantId?: string): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null }> {
  const response = await fetch(`${server}/auth/context`, { headers: { authorization: `Bearer ${jwtFor(tenantId)}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, retryAfter: response.headers.get('retry-after') };
}

/**
 * Polls until `probe` answers `status`; resolves with when (ms after the call) the last request that
 * still got the old answer was sent: how long the server served the superseded record, whatever the
 * latency of each poll.
 */
async function staleFor(probe: () => Promise<number>, status: number): Promise<number> {
  const started = performance.now();
  let lastStale = 0;
  for (;;) {
    const sentAt = performance.now() - started;
    if ((await probe()) === status) return lastStale;
    lastStale = sentAt;
    if (sentAt > 5000) throw new Error(`never answered ${status}`);
    await new Promise((wait) => setTimeout(wait, 10));
  }
}

/** The status the tenant-less analyst gets from `server`. */
const analystStatus = (server: string) => () => context(server).then((response) => response.status);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tollgate-scale-out-'));
  configFile = join(work, 'tollgate.yaml');
  writeFileSync(
    configFile,
    [
      'version: 1',
      'auth:',
      `  jwt_secret: "${SECRET}"`,
      '  rbac_enabled: true',
      '  rbac_cache_store: redis',
      `  rbac_cache_store_options: { url: "${REDIS_URL}" }`,
      '  permissions_cache_store: redis',
      `  permissions_cache_store_options: { url: "${REDIS_URL}" }`,
      `  rbac_record_key: "${recordKey}"`,
      `mcp: { enabled: true, token: "${MCP_TOKEN}", session_store: redis, redis_url: "${REDIS_URL}", redis_key_prefix: "${mcpPrefix}" }`,
      `limits: { store: redis, redis_url: "${REDIS_URL}", redis_key_prefix: "${limitsPrefix}", tenant: { limit: ${TENANT_LIMIT}, window: 60 } }`,
      '',
    ].join('\n'),
  );
  loadRecord({ analyst: ['*:*'] });
  [first, second] = await Promise.all([startServer(), startServer()]);
});

afterAll(async () => {
  await servers.stopAll();
  const redis = new Redis(REDIS_URL);
  const keys = [...(await redis.keys(`*${run}*`)), `tollgate:rbac:${recordKey}`];
  await redis.del(...keys);
  await redis.quit();
  rmSync(work, { recursive: true, force: true });
});

describe('two instances on one Redis', () => {
  it('enforce an RBAC record written through the CLI within a second, revoking and granting again', async () => {
    // Both instances hold the grant in process memory before the record changes.
    expect((await context(first)).status).toBe(200);
    expect((await context(second)).status).toBe(200);

    await loadRecordUnderLoad({ analyst: ['reports/*:get'] });
    const [revokedFirst, revokedSecond] = await Promise.all([staleFor(analystStatus(first), 403), staleFor(analystStatus(second), 403)]);
    expect((await context(second)).body).toMatchObject({ code: 'rbac_denied' });

    await loadRecordUnderLoad({ analyst: ['auth/*:get'] });
    const [grantedFirst, grantedSecond] = await Promise.all([staleFor(analystStatus(first), 200), staleFor(analystStatus(second), 200)]);

    const delays = [revokedFirst, revokedSecond, grantedFirst, grantedSecond];
    process.stdout.write(`old record last served (ms after the CLI's exit): ${delays.map((ms) => ms.toFixed(0)).join(', ')}\n`);
    for (const delay of delays) expect(delay).toBeLessThan(RECORD_REFRESH_MS);
  });

  it('share one rate-limit counter per tenant', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < TENANT_LIMIT; i++) statuses.push((await context(i % 2 === 0 ? first : second, 'limit-t')).status);
    expect(statuses).toEqual(Array(TENANT_LIMIT).fill(200));
    for (const server of [first, second]) {
      const refused = await context(server, 'limit-t');
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: { type: 'rate_limited' } });
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Another tenant is unaffected.
    expect((await context(second, 'other-t')).status).toBe(200);
  });

  it('serve an MCP session opened on one instance from the other, and end it there', async () => {
    const post = (server: string, body: unknown, session?: string) =>
      fetch(`${server}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${MCP_TOKEN}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } : {}),
        },
        body: JSON.stringify(body),
      });
    const opened = await post(first, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'scale-out', version: '1' } },
    });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect((await post(second, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);

    const listed = await post(second, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
    expect(listed.status).toBe(200);
    const [message] = (await listed.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
    expect(message.result.tools.map((tool: { name: string }) => tool.name)).toContain('generate');

    const ended = await fetch(`${second}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${MCP_TOKEN}`, 'mcp-session-id': session } });
    expect(ended.status).toBe(200);
    expect((await post(first, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, session)).status).toBe(404);
  });
});

/**
 * Issue 16 across processes: a grant one server cached in the shared Redis must not answer for another
 * role set or tenant on the other server. Both are asked under one Host, as behind one load balancer,
 * so only the token tells the requests apart.
 */
describe('two instances on one Redis, one grant cache', () => {
  const ISSUE_RECORD = { admin: ['*:*'], sales: ['sales/*:get'], analyst: ['auth/*:get'] };

  /** Status of GET /auth/context for user 99 with these roles (and tenant), under a shared Host. */
  function statusAs(server: string, roleIds: string[], tenantId?: string): Promise<number> {
    const token = sign({ user_id: 99, ...(tenantId ? { tenant_id: tenantId } : {}), role_ids: roleIds });
    return new Promise((resolveStatus, reject) => {
      get(`${server}/auth/context`, { headers: { host: 'tollgate.example.com', authorization: `Bearer ${token}` } }, (response) => {
        response.resume();
        response.on('end', () => resolveStatus(response.statusCode!));
      }).on('error', reject);
    });
  }

  beforeAll(async () => {
    loadRecord(ISSUE_RECORD);
    await new Promise((wait) => setTimeout(wait, RECORD_REFRESH_MS + 100));
  });

  it('a grant cached by one server does not answer for other roles or another tenant on the other, both ways', async () => {
    expect(await statusAs(first, ['admin'], 'grant-t1')).toBe(200);
    expect(await statusAs(second, ['nobody'], 'grant-t1')).toBe(403);
    expect(await statusAs(second, ['nobody'], 'grant-t2')).toBe(403);

    expect(await statusAs(second, ['admin'], 'grant-t2')).toBe(200);
    expect(await statusAs(first, ['nobody'], 'grant-t2')).toBe(403);
    expect(await statusAs(first, ['nobody'], 'grant-t1')).toBe(403);
    expect(await statusAs(first, ['admin', 'nobody'], 'grant-t1')).toBe(200);
  });

  it('a record written straight into Redis with an older last_update revokes cached grants on both servers', async () => {
    expect(await statusAs(first, ['admin'])).toBe(200);
    expect(await statusAs(second, ['admin'])).toBe(200);

    const redis = new Redis(REDIS_URL);
    const older = { last_update: Math.floor(Date.now() / 1000) - 7200, permissions: { ...ISSUE_RECORD, admin: ['sales/*:get'] } };
    await redis.set(`tollgate:rbac:${recordKey}`, JSON.stringify(older));
    await redis.quit();

    const [revokedFirst, revokedSecond] = await Promise.all([staleFor(() => statusAs(first, ['admin']), 403), staleFor(() => statusAs(second, ['admin']), 403)]);
    expect(revokedFirst).toBeLessThan(RECORD_REFRESH_MS);
    expect(revokedSecond).toBeLessThan(RECORD_REFRESH_MS);
    expect(await statusAs(first, ['analyst'])).toBe(200);
  });

  it('tollgate rbac load refuses a record over rbac_record_max_bytes, and both servers keep theirs', async () => {
    // About 1.2 MB of compact JSON, over the default 1 MiB.
    const padding = Array.from({ length: 70_000 }, (_, index) => `padding/${index}:get`);
    const file = writeRecordFile({ ...ISSUE_RECORD, padding });
    const result = spawnSync(process.execPath, [CLI, 'rbac', 'load', file, '--config', configFile], { ...CLI_OPTIONS(), timeout: 20_000 });
    expect({ status: result.status, stdout: result.stdout.toString() }).toEqual({ status: 1, stdout: '' });
    expect(result.stderr.toString()).toMatch(/^tollgate: the RBAC record is 1\d{6} bytes as JSON, more than rbac_record_max_bytes \(1048576\)\n$/);

    await new Promise((wait) => setTimeout(wait, RECORD_REFRESH_MS + 100));
    for (const server of [first, second]) {
      expect(await statusAs(server, ['analyst'])).toBe(200);
      // The record of the test before, with admin reduced to sales/*, is still the one in force.
      expect(await statusAs(server, ['admin'])).toBe(403);
    }
  });
});
