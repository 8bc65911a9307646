/**
 * /healthz of a server at its file-descriptor limit: the built server runs under `ulimit -n` as a subprocess;
 * the test fills its descriptor table with idle connections and asks on a connection opened before.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDistIfStale, ROOT } from './support/cli-run';
import { ServerProcesses } from './support/server-process';

const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const TOKEN = 'descriptor-liveness-token-0123456789';
/** Far below any default, so a few hundred connections reach it. */
const MAX_OPEN_FILES = 200;

interface Answer {
  status: number;
  body: string;
}

const servers = new ServerProcesses();
let work: string;
let origin: URL;
const hogs: Socket[] = [];

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(origin.port), origin.hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** One HTTP/1.1 exchange on `socket`, which stays open (keep-alive) for the next. */
function exchange(socket: Socket, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const text = received.toString('latin1');
      const headerEnd = text.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headerEnd))?.[1] ?? 0);
      if (received.length < headerEnd + 4 + length) return;
      socket.off('data', onData);
      socket.off('error', reject);
      resolve({ status: Number(text.slice(9, 12)), body: text.slice(headerEnd + 4, headerEnd + 4 + length) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    const headers = [`${method} ${path} HTTP/1.1`, `host: ${origin.host}`, `authorization: Bearer ${TOKEN}`];
    if (body !== undefined) headers.push('content-type: application/json', `content-length: ${Buffer.byteLength(body)}`);
    socket.write(`${headers.join('\r\n')}\r\n\r\n${body ?? ''}`);
  });
}

/** Opens connections until the server stops keeping them: its descriptor table is full. */
async function exhaustDescriptors(): Promise<void> {
  for (let i = 0; i < MAX_OPEN_FILES + 100; i++) {
    const socket = await open();
    socket.on('error', () => undefined);
    hogs.push(socket);
  }
  // Connections beyond the limit are accepted and closed at once by libuv's reserve-descriptor trick.
  await new Promise((resolve) => setTimeout(resolve, 500));
}

function releaseDescriptors(): Promise<void> {
  for (const socket of hogs.splice(0)) socket.destroy();
  return new Promise((resolve) => setTimeout(resolve, 500));
}

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-descriptors-'));
  // An upstream on a closed local port: a model call only tries to connect.
  writeFileSync(join(work, 'tollgate.yaml'), 'version: 1\nai: { retry_attempts: 0, enable_fallback: false }\nproviders:\n  ollama: { url: "http://127.0.0.1:9" }\n');
  const server = servers.startNode([MAIN, '--config', 'tollgate.yaml', '--port', '0'], work, {
    env: { API_TOKEN: TOKEN },
    maxOpenFiles: MAX_OPEN_FILES,
    startTimeoutMs: 30_000,
  });
  origin = new URL(await server.url);
}, 60_000);

afterAll(async () => {
  await releaseDescriptors();
  await servers.stopAll();
  rmSync(work, { recursive: true, force: true });
});

describe('/healthz at the descriptor limit', () => {
  it('is 503 while the process cannot open a descriptor, and 200 again once it can', async () => {
    const probe = await open();
    expect(await exchange(probe, 'GET', '/healthz')).toEqual({ status: 200, body: '{"status":"ok"}' });
    await exhaustDescriptors();
    expect(await exchange(probe, 'GET', '/healthz')).toEqual({ status: 503, body: '{"status":"failing","checks":{"file_descriptors":"exhausted"}}' });
    await releaseDescriptors();
    expect(await exchange(await open(), 'GET', '/healthz')).toEqual({ status: 200, body: '{"status":"ok"}' });
    probe.destroy();
  }, 60_000);

  it('stays 503 for a while after an upstream connect failed with EMFILE, though descriptors are free again', async () => {
    const probe = await open();
    await exhaustDescriptors();
    const call = await exchange(probe, 'POST', '/v1/generate', JSON.stringify({ prompt: 'Hi' }));
    expect(call.status).toBeGreaterThanOrEqual(500);
    await releaseDescriptors();
    expect(await exchange(await open(), 'GET', '/healthz')).toEqual({ status: 503, body: '{"status":"failing","checks":{"file_descriptors":"exhausted"}}' });
    probe.destroy();
  }, 60_000);
});
