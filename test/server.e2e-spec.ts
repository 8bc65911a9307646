/**
 * The real server (node dist/src/main.js) as a subprocess on a free loopback port: probes, body limit,
 * the auth switch (JWT_SECRET), configuration precedence and errors, graceful shutdown.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';

import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { buildDistIfStale, CLI, ROOT } from './support/cli-run';
import { ServerProcesses } from './support/server-process';
import { DEFAULT_SERVER_CONFIG } from '../src/config/config.defaults';

const MAIN = join(ROOT, 'dist', 'src', 'main.js');
/** How the start-up summary marks a /metrics without a token while the ledger is on (the default). */
const OPEN_METRICS = ' (open: the ledger summed over tenants; set metrics.token for per-tenant figures)';

interface Server {
  url: string;
  child: ChildProcess;
  output: () => string;
}

let work: string;
/** /readyz needs one ready AI provider: the servers here point their default (ollama) at this emulator. */
let ollama: OllamaEmulator;
const servers = new ServerProcesses();

/** Starts the server in a scratch directory with PORT=0 and waits for its "listening on" line. */
async function startServer(env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<Server> {
  const server = servers.startNode([MAIN, ...args], work, { env: { PORT: '0', OLLAMA_URL: ollama.url, ...env }, startTimeoutMs: 20_000 });
  return { url: await server.url, child: server.child, output: server.output };
}

/** Resolves with the log's `msg` texts once one matches `pattern` (the summary's probe lines come after listening). */
function logMessagesUntil(server: Server, pattern: RegExp): Promise<Array<{ level: number; msg: string }>> {
  const messages = () =>
    server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`no log line matching ${pattern}:\n${server.output()}`)), 20_000);
    const check = () => {
      if (!messages().some((entry) => pattern.test(entry.msg))) return;
      clearTimeout(timer);
      server.child.stdout!.off('data', check);
      resolvePromise(messages());
    };
    server.child.stdout!.on('data', check);
    check();
  });
}

/** Runs the server expecting it to refuse to start. */
function failToStart(env: NodeJS.ProcessEnv, args: string[] = []) {
  const run = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: work,
    env: { PATH: process.env.PATH, NO_COLOR: '1', PORT: '0', ...env },
    timeout: 20_000,
  });
  return { status: run.status, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/**
 * Sends a chunked body (no Content-Length) of `size` bytes in one chunk that never ends, and resolves with the
 * status of the answer. The server answers an over-limit body at once and closes the connection. Node destroys a
 * socket whose write fails before reading what already arrived, so a client still writing when the answer comes
 * loses it (fetch failed with EPIPE that way, depending on timing). Here the byte that crosses the limit is the
 * last one sent: every write is done before the answer can exist, and an error after the answer is expected.
 */
function postUnfinishedChunkedBody(url: string, size: number, path = '/healthz', bearer?: string): Promise<number> {
  const { hostname, port, host } = new URL(url);
  return new Promise((resolvePromise, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let answered = false;
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      const statusLine = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      if (statusLine && !answered) {
        answered = true;
        resolvePromise(Number(statusLine[1]));
        socket.destroy();
      }
    });
    socket.on('error', (error) => {
      if (!answered) reject(error);
    });
    socket.on('close', () => {
      if (!answered) reject(new Error(`connection closed without an answer (received ${JSON.stringify(received)})`));
    });
    const authorization = bearer === undefined ? '' : `authorization: Bearer ${bearer}\r\n`;
    const head = `POST ${path} HTTP/1.1\r\nhost: ${host}\r\n${authorization}content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
    socket.write(Buffer.concat([Buffer.from(`${head}${size.toString(16)}\r\n`), Buffer.alloc(size, 0x61)]));
  });
}

/** SIGTERM; resolves with how the process ended (exit 0 after a clean drain, see graceful-shutdown.e2e-spec.ts). */
function stop(server: Server): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolvePromise) => {
    server.child.once('exit', (code, signal) => resolvePromise({ code, signal }));
    server.child.kill('SIGTERM');
  });
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

function signHs256(payload: Record<string, unknown>, secret: string): string {
  const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(payload))}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-server-'));
  ollama = await startOllamaEmulator();
}, 120_000);

afterAll(async () => {
  await servers.stopAll('SIGKILL');
  rmSync(work, { recursive: true, force: true });
  await ollama.close();
});

describe('server without any configuration', () => {
  let server: Server;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    if (server) await stop(server);
  });

  it('listens on 127.0.0.1 by default', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await logMessagesUntil(server, /^configuration:/)).map((entry) => entry.msg)).toContain('configuration: built-in defaults (no configuration file)');
  });

  it('GET /healthz answers 200 without credentials', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 once the default provider is ready', async () => {
    const response = await fetch(`${server.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', checks: { providers: 'ok' } });
  });

  it('does not mount /auth/context when auth is off', async () => {
    expect((await fetch(`${server.url}/auth/context`)).status).toBe(404);
  });

  it('answers 413 for a body over the 1 MiB default limit, and reads one at the limit', async () => {
    const headers = { 'content-type': 'application/json' };
    const limit = DEFAULT_SERVER_CONFIG.bodyLimit;
    const over = await fetch(`${server.url}/healthz`, { method: 'POST', headers, body: `"${'a'.repeat(limit - 1)}"` });
    expect(over.status).toBe(413);
    const at = await fetch(`${server.url}/healthz`, { method: 'POST', headers, body: `"${'a'.repeat(limit - 2)}"` });
    // Within the limit the body is read, and the request meets the router: GET only here, so 405.
    expect(at.status).toBe(405);
    expect(at.headers.get('allow')).toBe('GET');
  });

  it('refuses an API call without a credential (401) before reading its body, whatever its size', async () => {
    const headers = { 'content-type': 'application/json' };
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(2 * DEFAULT_SERVER_CONFIG.bodyLimit) }] });
    expect((await fetch(`${server.url}/openai/v1/chat/completions`, { method: 'POST', headers, body })).status).toBe(401);
    expect((await fetch(`${server.url}/v1/generate`, { method: 'POST', headers, body })).status).toBe(401);
    // A chunked body that has not ended: answered from the headers, without waiting for the body.
    expect(await postUnfinishedChunkedBody(server.url, 16, '/v1/generate')).toBe(401);
    expect(await postUnfinishedChunkedBody(server.url, 16, '/openai/v1/embeddings')).toBe(401);
  });

  it('answers 413 for an over-limit body sent without Content-Length (chunked), without waiting for its end', async () => {
    expect(await postUnfinishedChunkedBody(server.url, DEFAULT_SERVER_CONFIG.bodyLimit + 1)).toBe(413);
  });
});

describe('configuration of the server', () => {
  it('TOLLGATE_BODY_LIMIT lowers the body limit', async () => {
    const server = await startServer({ TOLLGATE_BODY_LIMIT: '1024' });
    try {
      const body = JSON.stringify({ text: 'x'.repeat(2000) });
      const response = await fetch(`${server.url}/healthz`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(response.status).toBe(413);
    } finally {
      await stop(server);
    }
  });

  it('TOLLGATE_CHAT_BODY_LIMIT sets the chat routes\' limit, also under a base path', async () => {
    const token = 'token-for-the-chat-body-limit';
    const server = await startServer({ TOLLGATE_BODY_LIMIT: '1024', TOLLGATE_CHAT_BODY_LIMIT: '4096', TOLLGATE_BASE_PATH: '/gw', API_TOKEN: token });
    try {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
      const post = async (path: string, size: number) =>
        (await fetch(`${server.url}/gw${path}`, { method: 'POST', headers, body: JSON.stringify({ prompt: 'x'.repeat(size) }) })).status;
      // Read and parsed over body_limit: answered by the provider, or refused by validation (no `messages`).
      expect(await post('/v1/generate', 3000)).toBe(200);
      expect(await post('/openai/v1/chat/completions', 3000)).toBe(400);
      expect(await post('/v1/generate', 5000)).toBe(413);
      expect(await post('/v1/search', 3000)).toBe(413);
      // Refused while the client still writes: a raw socket keeps the answer that fetch could lose (EPIPE).
      expect(await postUnfinishedChunkedBody(server.url, 1025, '/gw/v1/embeddings', token)).toBe(413);
      expect(await postUnfinishedChunkedBody(server.url, 1025, '/gw/openai/v1/embeddings', token)).toBe(413);
    } finally {
      await stop(server);
    }
  });

  it('--port beats PORT, and a YAML file sets the base path', async () => {
    const file = join(work, 'prefixed.yaml');
    writeFileSync(file, 'version: 1\nserver:\n  port: 1\n  base_path: /gateway\n');
    const server = await startServer({ PORT: '1' }, ['--config', file, '--port', '0']);
    try {
      const texts = (await logMessagesUntil(server, /^API docs:/)).map((entry) => entry.msg);
      expect(texts).toContain(`configuration: ${file}`);
      expect(texts).toContain(`API docs: ${server.url}/gateway/docs (OpenAPI JSON at ${server.url}/gateway/docs-json); metrics: ${server.url}/gateway/metrics${OPEN_METRICS}`);
      expect((await fetch(`${server.url}/gateway/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(404);
    } finally {
      await stop(server);
    }
  });

  it('refuses an invalid file with the file and key named, exit 1', () => {
    const file = join(work, 'bad.yaml');
    writeFileSync(file, 'version: 1\nauth:\n  jwt_secret: short\n  jwt_algorithm: HS257\n');
    const run = failToStart({}, ['--config', file]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`tollgate: ${file}: auth.jwt_algorithm: must be one of HS256,`);
    expect(run.stderr + run.stdout).not.toContain('short');
  });

  it('refuses what AuthModule or a provider would refuse before Nest starts: `file: key: message` lines, exit 1, no stack trace', () => {
    const file = join(work, 'refused-at-start.yaml');
    writeFileSync(file, 'version: 1\nauth:\n  jwt_secret: "w3ak!"\nproviders:\n  gemini: {}\n');
    const run = failToStart({}, ['--config', file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `tollgate: ${file}: auth.jwt_secret: is 5 bytes; HS256 needs at least 32 (or set auth.allow_weak_secret: true)\n` +
        `tollgate: ${file}: providers.gemini: an api_key is required for gemini\n`,
    );
  });

  it('writes one access line per request by default; logs.requests false (TOLLGATE_REQUEST_LOGS) leaves it out', async () => {
    const accessLines = async (env: NodeJS.ProcessEnv, args: string[] = []) => {
      const server = await startServer(env, args);
      try {
        const response = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'access-line-probe' } });
        expect(response.status).toBe(200);
        await stop(server);
      } finally {
        server.child.kill('SIGKILL');
      }
      return server
        .output()
        .split('\n')
        .filter((line) => line.includes('"request_id":"access-line-probe"') && line.includes('"msg":"GET 200"'));
    };
    expect(await accessLines({})).toHaveLength(1);
    expect(await accessLines({ TOLLGATE_REQUEST_LOGS: 'false' })).toHaveLength(0);
    const file = join(work, 'quiet-requests.yaml');
    writeFileSync(file, 'version: 1\nlogs:\n  requests: false\n');
    expect(await accessLines({}, ['--config', file])).toHaveLength(0);
  });

  it('refuses a loopback SEARXNG_URL without SEARXNG_ALLOW_PRIVATE_NETWORK, naming the variable; starts with it', async () => {
    const run = failToStart({ SEARXNG_URL: 'http://127.0.0.1:8888' });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      'tollgate: configuration: tools.web_search.url: points at a loopback, private or link-local address; set allow_private_network: true ' +
        'for a tool you run yourself (SEARXNG_ALLOW_PRIVATE_NETWORK=true for the one SEARXNG_URL registers)\n',
    );
    await stop(await startServer({ SEARXNG_URL: 'http://127.0.0.1:8888', SEARXNG_ALLOW_PRIVATE_NETWORK: 'true' }));
  });

  it('refuses a logs.requests that is not a boolean, naming the key', () => {
    const run = failToStart({ TOLLGATE_REQUEST_LOGS: 'sometimes' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('tollgate: TOLLGATE_REQUEST_LOGS: logs.requests: must be a boolean');
  });

  it('refuses an invalid PORT naming the variable', () => {
    const run = failToStart({ PORT: 'eighty' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('tollgate: PORT: server.port: must be an integer');
  });

  it('refuses an unknown flag with exit 2 and prints usage', () => {
    const run = failToStart({}, ['--prot', '8080']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^tollgate: Unknown option '--prot'/);
    expect(run.stderr).toContain('Usage: node dist/src/main.js');
  });

  it('refuses a bad --port value with exit 2', () => {
    const run = failToStart({}, ['--port', '70000']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^tollgate: --port must be an integer from 0 to 65535 \(got "70000"\)/);
  });

  it('closes the application on SIGTERM before exiting', async () => {
    const server = await startServer();
    const started = Date.now();
    const ended = await stop(server);
    expect(ended).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('stopped (SIGTERM)');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('start-up summary', () => {
  const WARN = 40;

  it('says what a first run needs: no API token (how to make one), the provider it created from OLLAMA_URL and its first probe, /docs and /metrics', async () => {
    const server = await startServer();
    try {
      const messages = await logMessagesUntil(server, /first health probe/);
      const texts = messages.map((entry) => entry.msg);
      const origin = server.url;
      expect(texts).toEqual(
        expect.arrayContaining([
          'configuration: built-in defaults (no configuration file)',
          'AuthModule: off (JWT, tenancy and RBAC; set JWT_SECRET or an auth: section to turn it on)',
          `AI surfaces: ${origin}/v1 (Tollgate's own), ${origin}/openai/v1 (OpenAI chat completions and responses; OPENAI_BASE_URL), ` +
            `${origin}/anthropic/v1 (Anthropic Messages; ANTHROPIC_BASE_URL=${origin}/anthropic), ${origin}/gemini/v1beta (Gemini; GOOGLE_GEMINI_BASE_URL=${origin}/gemini)`,
          'MCP: off over HTTP (mcp.enabled: false); tollgate mcp --stdio serves it on stdio',
          'providers: ollama (default ollama)',
          'provider ollama: created from OLLAMA_URL (no providers: section in the configuration)',
          `provider ollama (ollama) at ${ollama.url}: checking its health`,
          `provider ollama (ollama) at ${ollama.url}: answered its first health probe, ready (model llama3.2)`,
          `API docs: ${origin}/docs (OpenAPI JSON at ${origin}/docs-json); metrics: ${origin}/metrics${OPEN_METRICS}`,
        ]),
      );
      const warning = messages.find((entry) => entry.msg.startsWith('no API token is set'));
      expect(warning).toMatchObject({ level: WARN });
      expect(warning!.msg).toContain('every /v1, /openai/v1, /anthropic/v1 and /gemini/v1beta call answers 401. Make one with `tollgate secret` and start with API_TOKEN=');
    } finally {
      await stop(server);
    }
  });

  it('warns about api.auth: none, an open MCP endpoint and an unreachable provider; a set token is reported as set, never shown', async () => {
    const token = 'tok-summary-SECRET-4411';
    writeFileSync(join(work, 'open.yaml'), 'version: 1\napi: { auth: none }\nmcp: { enabled: true, auth: none }\nproviders:\n  ollama: { url: "http://127.0.0.1:9" }\n');
    const open = await startServer({ OLLAMA_URL: '' }, ['--config', 'open.yaml']);
    try {
      const messages = await logMessagesUntil(open, /first health probe/);
      expect(messages.find((entry) => entry.msg.startsWith('api.auth: none:'))).toMatchObject({
        level: WARN,
        msg: `api.auth: none: /v1, /openai/v1, /anthropic/v1 and /gemini/v1beta answer anyone who can reach ${open.url} without a credential; use it only where nobody else can connect`,
      });
      expect(messages.find((entry) => entry.msg.startsWith('MCP:'))).toMatchObject({
        level: WARN,
        msg: `MCP: ${open.url}/mcp (Streamable HTTP) answers anyone without a credential (mcp.auth: none)`,
      });
      const probe = messages.find((entry) => entry.msg.includes('first health probe'));
      expect(probe).toMatchObject({ level: WARN });
      expect(probe!.msg).toMatch(/^provider ollama \(ollama\) at http:\/\/127\.0\.0\.1:9: did not answer its first health probe \(.*ECONNREFUSED.*\); \/readyz answers 503 until a provider is ready$/);
      expect(messages.some((entry) => entry.msg.startsWith('no API token'))).toBe(false);
    } finally {
      await stop(open);
    }

    const withToken = await startServer({ API_TOKEN: token });
    try {
      const texts = (await logMessagesUntil(withToken, /first health probe/)).map((entry) => entry.msg);
      expect(texts).toContain(
        '/v1, /openai/v1, /anthropic/v1 and /gemini/v1beta: API token (Authorization: Bearer <API_TOKEN>, or x-api-key on /anthropic/v1, x-goog-api-key on /gemini/v1beta); a token is set',
      );
      expect(withToken.output()).not.toContain(token);
    } finally {
      await stop(withToken);
    }
  });
});

describe('server with JWT_SECRET set', () => {
  const secret = randomBytes(48).toString('hex');
  let server: Server;
  beforeAll(async () => {
    server = await startServer({ JWT_SECRET: secret });
  });
  afterAll(async () => {
    if (server) await stop(server);
  });

  const claims = () => ({
    user_id: 42,
    tenant_id: 't-1',
    subdomain: 'acme',
    pathname_slugs: ['north', 'south'],
    role_ids: [1, 'admin'],
    exp: Math.floor(Date.now() / 1000) + 300,
  });

  it('turns auth on and keeps /healthz and /readyz public', async () => {
    const texts = (await logMessagesUntil(server, /^AuthModule:/)).map((entry) => entry.msg);
    expect(texts).toContain('AuthModule: JWT on; tenancy checks: none; RBAC off');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it('GET /auth/context without a token: 401 with WWW-Authenticate: Bearer', async () => {
    const response = await fetch(`${server.url}/auth/context`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(await response.json()).toMatchObject({ error: 'Authentication required', status: 401 });
  });

  it('GET /auth/context with a token signed by another secret: 401', async () => {
    const token = signHs256(claims(), randomBytes(48).toString('hex'));
    const response = await fetch(`${server.url}/auth/context`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(401);
  });

  it('GET /auth/context with a valid token: 200 with the caller context and never the token', async () => {
    const token = signHs256(claims(), secret);
    const response = await fetch(`${server.url}/auth/context`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      user_id: 42,
      tenant_id: 't-1',
      subdomain: 'acme',
      pathname_slugs: ['north', 'south'],
      role_ids: ['1', 'admin'],
    });
    expect(text).not.toContain(token.split('.')[2]);
  });

  it('never writes the secret or a token to its logs', async () => {
    const token = signHs256(claims(), secret);
    await fetch(`${server.url}/auth/context`, { headers: { authorization: `Bearer ${token}` } });
    expect(server.output()).not.toContain(secret);
    expect(server.output()).not.toContain(token.split('.')[2]);
  });
});

describe('server with RBAC on a Redis store (127.0.0.1:6379)', () => {
  const secret = randomBytes(48).toString('hex');
  const recordKey = `server-e2e-${randomBytes(8).toString('hex')}`;
  let server: Server;
  let file: string;

  beforeAll(async () => {
    file = join(work, `${recordKey}.yaml`);
    writeFileSync(
      file,
      [
        'version: 1',
        'auth:',
        '  rbac_enabled: true',
        '  rbac_cache_store: redis',
        `  rbac_cache_store_options: { url: "${process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'}" }`,
        '  permissions_cache_store: memory',
        `  rbac_record_key: ${recordKey}`,
        '',
      ].join('\n'),
    );
    server = await startServer({ JWT_SECRET: secret }, ['--config', file]);
  });
  afterAll(async () => {
    if (server) await stop(server);
  });

  it('/readyz is 503 until an RBAC record exists, then 200 once `tollgate rbac load` stored one', async () => {
    const before = await fetch(`${server.url}/readyz`);
    expect(before.status).toBe(503);
    expect(await before.json()).toEqual({ status: 'not_ready', checks: { providers: 'ok', rbac: 'failing' } });

    const record = join(work, `${recordKey}.json`);
    writeFileSync(record, JSON.stringify({ permissions: { admin: ['*:*'] } }));
    const load = spawnSync(process.execPath, [CLI, 'rbac', 'load', record, '--config', file], {
      cwd: work,
      env: { PATH: process.env.PATH },
    });
    expect(load.stderr.toString()).toBe('');
    expect(load.status).toBe(0);

    const after = await fetch(`${server.url}/readyz`);
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual({ status: 'ready', checks: { providers: 'ok', rbac: 'ok' } });
  });
});
