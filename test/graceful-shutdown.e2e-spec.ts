/**
 * Graceful shutdown of the real server (node dist/src/main.js) against a slow Ollama emulator: on SIGTERM
 * /readyz reports not ready at once and, for server.shutdown_grace, requests are still served (each answer
 * closing its connection); then new connections are refused, idle ones closed, a request or stream in flight
 * completes, its answer closing its connection, and the process exits 0 with its stores and MCP session
 * store (Redis) closed; a request or stream running past server.shutdown_timeout is cut and the process still
 * exits, with code 1.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { buildDistIfStale, ROOT } from './support/cli-run';
import { ServerProcesses } from './support/server-process';

const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const TOKEN = 'shutdown-test-token';

interface Server {
  url: string;
  port: number;
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

let work: string;
let ollama: OllamaEmulator;
const servers = new ServerProcesses();

async function startServer(env: NodeJS.ProcessEnv): Promise<Server> {
  const server = servers.startNode([MAIN], work, {
    env: { PORT: '0', OLLAMA_URL: ollama.url, API_TOKEN: TOKEN, TOLLGATE_CONFIG: join(work, 'tollgate.yaml'), ...env },
    startTimeoutMs: 20_000,
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolveExit) =>
    server.child.once('exit', (code, signal) => resolveExit({ code, signal, at: Date.now() })),
  );
  const url = await server.url;
  return { url, port: Number(new URL(url).port), child: server.child, output: server.output, exited };
}

/** POST /v1/generate on its own connection; resolves with the status and body, or the transport error's code. */
function generate(server: Server): Promise<{ status?: number; body?: Record<string, unknown>; error?: string; at: number }> {
  return new Promise((resolvePromise) => {
    const body = JSON.stringify({ prompt: 'slow question', enable_fallback: false });
    const req = request(
      { host: '127.0.0.1', port: server.port, method: 'POST', path: '/v1/generate', agent: false, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolvePromise({ status: res.statusCode, body: JSON.parse(text) as Record<string, unknown>, at: Date.now() }));
        res.on('error', (error: NodeJS.ErrnoException) => resolvePromise({ error: error.code ?? error.message, at: Date.now() }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolvePromise({ error: error.code ?? error.message, at: Date.now() }));
    req.end(body);
  });
}

/** POST /v1/generate with "stream": true; calls `onFirstDelta` once the first event arrived, resolves with the whole text received. */
function generateStream(server: Server, onFirstDelta: () => void): Promise<{ text: string; complete: boolean; at: number }> {
  return new Promise((resolvePromise) => {
    const body = JSON.stringify({ prompt: 'slow streamed question', stream: true, enable_fallback: false });
    let text = '';
    let notified = false;
    const req = request(
      { host: '127.0.0.1', port: server.port, method: 'POST', path: '/v1/generate', agent: false, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (!notified && text.includes('event: delta')) {
            notified = true;
            onFirstDelta();
          }
        });
        res.on('end', () => resolvePromise({ text, complete: res.complete, at: Date.now() }));
        res.on('error', () => resolvePromise({ text, complete: false, at: Date.now() }));
      },
    );
    req.on('error', () => resolvePromise({ text, complete: false, at: Date.now() }));
    req.end(body);
  });
}

/** Whether a new TCP connection to the port is accepted. */
function connectOutcome(port: number): Promise<'accepted' | string> {
  return new Promise((resolvePromise) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolvePromise('accepted');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolvePromise(error.code ?? 'error'));
  });
}

/** Polls `condition` every 20 ms (after `probe`, when given, updates what it reads) until it holds or the time is up. */
async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000, probe?: () => Promise<void>): Promise<void> {
  const until = Date.now() + timeoutMs;
  await probe?.();
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 20));
    await probe?.();
  }
}

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-shutdown-'));
  // MCP sessions in Redis: one more store connection the shutdown has to close.
  writeFileSync(
    join(work, 'tollgate.yaml'),
    `version: 1\nmcp:\n  enabled: true\n  session_store: redis\n  redis_url: redis://127.0.0.1:6379\n  redis_key_prefix: "tollgate:shutdown-test:${process.pid}:"\n`,
  );
  ollama = await startOllamaEmulator();
}, 120_000);

afterAll(async () => {
  await servers.stopAll('SIGKILL');
  await ollama.close();
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => ollama.server.reset());

describe('graceful shutdown', () => {
  jest.setTimeout(60_000);

  it('SIGTERM: refuses new connections, lets the request in flight finish, closes the modules, exits 0', async () => {
    const server = await startServer({ TOLLGATE_SHUTDOWN_TIMEOUT: '10' });
    // An idle keep-alive connection must not hold the drain open.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    ollama.server.delayNext(1500, 1, '/api/chat');
    const inFlight = generate(server);
    await waitFor(() => ollama.server.requestsTo('/api/chat').length === 1, 'the upstream call');

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await waitFor(() => server.output().includes('no new connections'), 'the shutdown log line');
    expect(await connectOutcome(server.port)).toBe('ECONNREFUSED');

    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ response: 'Hello from the Ollama emulator', provider: 'ollama' });
    const ended = await server.exited;
    expect(ended).toMatchObject({ code: 0, signal: null });
    // Exit follows the drain promptly, well before the 10 s deadline.
    expect(ended.at - signalled).toBeLessThan(5000);
    expect(ended.at).toBeGreaterThanOrEqual(answer.at);
    const output = server.output();
    expect(output).toContain('SIGTERM: no new connections; draining in-flight requests (deadline 10 s)');
    expect(output).toContain('stopped (SIGTERM)');
    expect(output).not.toContain('drain deadline');
    expect(output.indexOf('stopped (SIGTERM)')).toBeGreaterThan(output.indexOf('no new connections'));
  });

  it('a request running past the deadline is cut, and the process still exits (code 1)', async () => {
    const server = await startServer({ TOLLGATE_SHUTDOWN_TIMEOUT: '1' });
    ollama.server.delayNext(30_000, 1, '/api/chat');
    const inFlight = generate(server);
    await waitFor(() => ollama.server.requestsTo('/api/chat').length === 1, 'the upstream call');

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const answer = await inFlight;
    expect(answer.status).toBeUndefined();
    expect(answer.error).toMatch(/ECONNRESET|socket hang up/);
    expect(answer.at - signalled).toBeGreaterThanOrEqual(900);
    const ended = await server.exited;
    expect(ended).toMatchObject({ code: 1, signal: null });
    expect(ended.at - signalled).toBeLessThan(5000);
    expect(server.output()).toContain('drain deadline of 1 s passed: closing the remaining connections');
    expect(server.output()).toContain('stopped (SIGTERM)');
  });

  it('a request in flight on a kept-alive connection is answered with Connection: close, and that connection closed after it', async () => {
    const server = await startServer({ TOLLGATE_SHUTDOWN_TIMEOUT: '10' });
    // Two requests in flight: the first ends early on a connection of its own; the second keeps the drain going.
    ollama.server.delayNext(800, 1, '/api/chat');
    ollama.server.delayNext(3000, 1, '/api/chat');
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const closed = new Promise<number>((resolveClose) => socket.once('close', () => resolveClose(Date.now())));
    const body = JSON.stringify({ prompt: 'slow question', enable_fallback: false });
    socket.write(
      `POST /v1/generate HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
        `X-Request-Id: drain-check-1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await waitFor(() => ollama.server.requestsTo('/api/chat').length === 1, 'the first upstream call');
    const second = generate(server);
    await waitFor(() => ollama.server.requestsTo('/api/chat').length === 2, 'the second upstream call');

    server.child.kill('SIGTERM');
    await waitFor(() => received.includes('Hello from the Ollama emulator'), 'the first answer');
    const answered = Date.now();
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received.toLowerCase()).toContain('connection: close');
    expect(received.toLowerCase()).toContain('x-request-id: drain-check-1');
    // Closed by the server right after the answer, not kept open until the drain ends.
    expect((await closed) - answered).toBeLessThan(500);

    expect((await second).status).toBe(200);
    expect(await server.exited).toMatchObject({ code: 0, signal: null });
  });

  it('SIGTERM with a grace: /readyz answers 503 at once while requests are still served (with Connection: close); then the drain, and exit 0', async () => {
    let refusedSeen = false;
    const server = await startServer({ TOLLGATE_SHUTDOWN_TIMEOUT: '10', TOLLGATE_SHUTDOWN_GRACE: '1.5' });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    // A kept-alive connection that stays idle through the grace is closed when the drain begins.
    const idle = connect(server.port, '127.0.0.1');
    await once(idle, 'connect');
    idle.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await once(idle, 'data');
    const idleClosed = new Promise<number>((resolveClose) => idle.once('close', () => resolveClose(Date.now())));

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await waitFor(() => server.output().includes('not ready; serving for the 1.5 s grace'), 'the grace log line');
    const readyz = await fetch(`${server.url}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toEqual({ status: 'not_ready', checks: { shutdown: 'draining' } });
    const liveness = await fetch(`${server.url}/healthz`);
    expect(liveness.status).toBe(200);
    expect(liveness.headers.get('connection')).toBe('close');
    const served = await generate(server);
    expect(served.status).toBe(200);
    expect(served.at - signalled).toBeLessThan(1500);

    expect(await idleClosed).toBeGreaterThanOrEqual(signalled + 1400);
    // The drain closes idle connections and the listener in the same step, in either order: the port refuses
    // new connections within moments of the idle one closing, well before the exit.
    await waitFor(() => refusedSeen, 'the listener to close', 1000, async () => {
      refusedSeen = (await connectOutcome(server.port)) === 'ECONNREFUSED';
    });
    const ended = await server.exited;
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(ended.at - signalled).toBeLessThan(4000);
    expect(server.output()).toMatch(/drained in \d+ ms, \d+ ms after SIGTERM; closing the modules/);
  });

  it('a stream in flight is drained to its last event before the process exits 0', async () => {
    const server = await startServer({ TOLLGATE_SHUTDOWN_TIMEOUT: '10' });
    ollama.server.inject({ kind: 'stream', chunkDelayMs: 250 }, 1, '/api/chat');
    let signalled = 0;
    const streamed = await generateStream(server, () => {
      signalled = Date.now();
      server.child.kill('SIGTERM');
    });
    expect(signalled).toBeGreaterThan(0);
    const deltas = [...streamed.text.matchAll(/^event: delta\ndata: (.*)$/gm)].map((match) => (JSON.parse(match[1]) as { text: string }).text);
    expect(deltas.join('')).toBe('Hello from the Ollama emulator');
    expect(streamed.text).toMatch(/event: done\ndata: \{[^\n]*"provider":"ollama"/);
    expect(streamed.at - signalled).toBeGreaterThanOrEqual(900);
    const ended = await server.exited;
    expect(ended).toMatchObject({ code: 0, signal: null });
  });

  it('a stream running past the deadline is cut without its done event, and the process exits 1', async () => {
    const server = await startServer({ TOLLGATE_SHUTDOWN_TIMEOUT: '1' });
    ollama.server.inject({ kind: 'stream', chunkDelayMs: 1000 }, 1, '/api/chat');
    let signalled = 0;
    const streamed = await generateStream(server, () => {
      signalled = Date.now();
      server.child.kill('SIGTERM');
    });
    expect(streamed.text).toContain('event: delta');
    expect(streamed.text).not.toContain('event: done');
    expect(streamed.complete).toBe(false);
    expect(streamed.at - signalled).toBeGreaterThanOrEqual(900);
    const ended = await server.exited;
    expect(ended).toMatchObject({ code: 1, signal: null });
    expect(ended.at - signalled).toBeLessThan(5000);
  });

  it('an idle server exits 0 at once on SIGINT', async () => {
    const server = await startServer({});
    const signalled = Date.now();
    server.child.kill('SIGINT');
    const ended = await server.exited;
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(ended.at - signalled).toBeLessThan(5000);
    expect(server.output()).toContain('SIGINT: no new connections; draining in-flight requests (deadline 25 s)');
  });
});
