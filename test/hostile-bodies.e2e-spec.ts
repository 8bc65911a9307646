/**
 * Issue 27, "unauthenticated heap exhaustion", against the real server process: 20 MiB bodies of tiny JSON values
 * (`[{},{},...]`, ~7 million objects) used to be parsed before the API guard refused them, and ten at once
 * without a credential took the process to 3.7 GB and stalled /healthz for seconds. Here waves of them, without
 * a credential, with a wrong token and with an unknown API key, are answered 401 before their bodies are read,
 * while the server's resident memory stays bounded and /healthz keeps answering; the same body from an
 * authenticated caller is refused by `server.json_value_limit` before it is parsed; a 15 MiB base64 image still
 * reaches the provider.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { type ServerProcess, ServerProcesses } from './support/server-process';

const API_TOKEN = 'api-token-for-hostile-bodies';
const ADMIN_TOKEN = 'admin-token-for-hostile-bodies';
const UPSTREAM_KEY = 'sk-emulator-hostile-bodies';
const MiB = 1024 * 1024;
const CHAT_BODY_LIMIT = 20 * MiB;
/** Requests per wave: the probe's crash took two waves of twenty. */
const WAVE = 20;
const WAVES = 2;
/** Resident memory the waves may add: the probe saw gigabytes; a refused request holds little more than its headers. */
const RSS_GROWTH_BOUND = 250 * MiB;
/**
 * /healthz while the waves run. The issue asks for 100 ms: the median answer is held to it; on the two cores shared
 * with other test runs (load 6-10) the idle server's slowest answer alone reached 230 ms, and during the waves
 * 50-420 ms. So the bound has headroom: on 4716339 /healthz did not answer for 12-20 s.
 */
const HEALTHZ_BOUND_MS = 1_000;
/** The 100 ms, for the typical answer: one slow answer on a shared core is a scheduling hiccup, not a stall. */
const HEALTHZ_MEDIAN_BOUND_MS = 100;
/** A 401 arrives before the body is read; the probe's slowest took 28 s. */
const REFUSAL_BOUND_MS = 5_000;

/** Just under chat_body_limit of `[{},{},...]`: valid JSON, ~7 million objects once parsed. */
const HOSTILE = Buffer.from(`[${'{},'.repeat((CHAT_BODY_LIMIT - 16) / 3)}{}]`);

let work: string;
let upstream: OpenAiEmulator;
const servers = new ServerProcesses();
let server: ServerProcess;
let url: string;
let apiKey: string;

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/** Sockets whose answer has not come: cut when the server passes its memory bound, so a failing run ends at once. */
const unanswered = new Set<Socket>();

/** Bytes per write of a body: the next goes after the previous one was handed to the kernel. */
const WRITE_CHUNK = 256 * 1024;

/**
 * POSTs `body` with a Content-Length over a raw socket, as fast as the socket takes it, and resolves with the
 * answer once it is complete. Like curl, it stops sending once an answer has come: a server that refuses a large
 * body closes the connection, and a write into it would fail (EPIPE) before the answer were read.
 */
function post(path: string, body: Buffer, bearer?: string, declaredLength = body.length): Promise<Answer> {
  const started = performance.now();
  const { hostname, port, host } = new URL(url);
  return new Promise((resolvePromise, reject) => {
    const socket = connect(Number(port), hostname);
    unanswered.add(socket);
    let received = Buffer.alloc(0);
    const answer = (): Answer | undefined => {
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return undefined;
      const head = received.subarray(0, headEnd).toString('latin1');
      const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
      if (received.length < headEnd + 4 + length) return undefined;
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
      return { status, body: received.subarray(headEnd + 4, headEnd + 4 + length).toString(), ms: performance.now() - started };
    };
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      const complete = answer();
      if (!complete) return;
      unanswered.delete(socket);
      resolvePromise(complete);
      socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed without a whole answer (${JSON.stringify(received.toString('latin1').slice(0, 200))})`)));
    const authorization = bearer === undefined ? '' : `authorization: Bearer ${bearer}\r\n`;
    socket.write(`POST ${path} HTTP/1.1\r\nhost: ${host}\r\n${authorization}content-type: application/json\r\ncontent-length: ${declaredLength}\r\n\r\n`);
    const writeFrom = (offset: number): void => {
      if (offset >= body.length || received.length > 0 || socket.destroyed) return;
      socket.write(body.subarray(offset, offset + WRITE_CHUNK), () => writeFrom(offset + WRITE_CHUNK));
    };
    writeFrom(0);
  });
}

/** The server process's resident set size, from /proc (Linux); undefined once it has exited. */
function serverRss(): number | undefined {
  const rss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'));
  return rss ? Number(rss[1]) * 1024 : undefined;
}

/**
 * Polls /healthz every 20 ms from a process of its own (this one is busy writing the bodies, which would delay
 * its own measurements), until its stdin closes; then prints the slowest and the median answer in ms and the
 * count of 200s.
 */
const HEALTHZ_POLLER = `
let running = true, answers = 0;
const times = [];
process.stdin.on('end', () => { running = false; }).resume();
(async () => {
  while (running) {
    const started = performance.now();
    const response = await fetch(process.argv[1] + '/healthz', { signal: AbortSignal.timeout(10000) }).catch(() => undefined);
    await response?.text();
    times.push(performance.now() - started);
    if (response?.status === 200) answers++;
    await new Promise((wait) => setTimeout(wait, 20));
  }
  times.sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({ slowest: times[times.length - 1] ?? 0, median: times[Math.floor(times.length / 2)] ?? 0, answers }));
})();
`;

interface Watched<T> {
  result: T;
  slowestHealthzMs: number;
  medianHealthzMs: number;
  healthzAnswers: number;
  /** The most resident memory the server gained while `work` ran. */
  rssGrowth: number;
}

/**
 * Runs `work` while /healthz is polled and the server's RSS sampled every 10 ms. Past RSS_GROWTH_BOUND (or
 * when the server dies) every unanswered request is cut, so `work` fails at once instead of after a crash.
 */
async function watched<T>(work: () => Promise<T>): Promise<Watched<T>> {
  const poller = spawn(process.execPath, ['-e', HEALTHZ_POLLER, url], { stdio: ['pipe', 'pipe', 'inherit'] });
  let report = '';
  poller.stdout.on('data', (chunk: Buffer) => (report += chunk.toString()));
  const exited = new Promise((done) => poller.once('exit', done));
  const baseline = serverRss()!;
  let peak = baseline;
  const sampler = setInterval(() => {
    const rss = serverRss();
    peak = Math.max(peak, rss ?? Infinity);
    if (peak - baseline <= RSS_GROWTH_BOUND) return;
    const reason = rss === undefined ? 'the server process died' : `the server's RSS grew by ${Math.round((peak - baseline) / MiB)} MiB`;
    for (const socket of unanswered) socket.destroy(new Error(reason));
  }, 10);
  try {
    // Lets the poller start, so the work runs while it polls.
    await new Promise((wait) => setTimeout(wait, 300));
    const result = await work();
    await new Promise((wait) => setTimeout(wait, 100));
    poller.stdin.end();
    await exited;
    const { slowest, median, answers } = JSON.parse(report) as { slowest: number; median: number; answers: number };
    return { result, slowestHealthzMs: slowest, medianHealthzMs: median, healthzAnswers: answers, rssGrowth: peak - baseline };
  } finally {
    clearInterval(sampler);
    poller.stdin.end();
    await exited;
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tollgate-hostile-bodies-'));
  upstream = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY });
  const configFile = join(work, 'tollgate.yaml');
  writeFileSync(
    configFile,
    [
      'version: 1',
      `api: { token: "${API_TOKEN}" }`,
      'providers:',
      `  openai: { url: "${upstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 20 }`,
      'governance:',
      '  keys: { store: memory }',
      `  admin_token: "${ADMIN_TOKEN}"`,
      'logs: { requests: false }',
      '',
    ].join('\n'),
  );
  server = servers.start(configFile, work);
  url = await server.url;
  const created = await fetch(`${url}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'hostile-bodies', name: 'hostile-bodies' }),
  });
  expect(created.status).toBe(201);
  apiKey = ((await created.json()) as { key: string }).key;
}, 60_000);

afterAll(async () => {
  await servers.stopAll('SIGKILL');
  await upstream?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('20 MiB bodies of tiny JSON values', () => {
  it(`waves of ${WAVE} without a valid credential are answered 401 at once; RSS stays bounded and /healthz keeps answering`, async () => {
    const credentials = [undefined, 'not-the-token', 'tg_000000000000_unknownkeyunknownkeyunknownkeyunknownkey'];
    const paths = ['/openai/v1/chat/completions', '/v1/generate'];
    const { result: answers, slowestHealthzMs, medianHealthzMs, rssGrowth, healthzAnswers } = await watched(async () => {
      const all: Answer[] = [];
      for (let wave = 0; wave < WAVES; wave++) {
        const sent = Array.from({ length: WAVE }, (_, index) => post(paths[index % paths.length], HOSTILE, credentials[index % credentials.length]));
        all.push(...(await Promise.all(sent)));
      }
      return all;
    });
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 401));
    expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(REFUSAL_BOUND_MS);
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_BOUND);
    expect(healthzAnswers).toBeGreaterThan(0);
    expect(slowestHealthzMs).toBeLessThan(HEALTHZ_BOUND_MS);
    expect(medianHealthzMs).toBeLessThan(HEALTHZ_MEDIAN_BOUND_MS);
    // The same 401 as the guard's, in each surface's shape.
    const openAi = answers.find((answer) => answer.body.includes('invalid_api_key'));
    expect(JSON.parse(openAi!.body)).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
    expect(answers.some((answer) => JSON.parse(answer.body).error?.type === 'authentication_required')).toBe(true);
  }, 30_000);

  it('a body declared larger than chat_body_limit, without a credential, is answered 401 without being read', async () => {
    const answer = await post('/v1/generate', Buffer.alloc(0), undefined, 1024 * MiB);
    expect(answer.status).toBe(401);
    expect(answer.ms).toBeLessThan(REFUSAL_BOUND_MS);
  });

  it('from an authenticated caller, is refused by server.json_value_limit before it is parsed, in each surface\'s shape', async () => {
    const { result, rssGrowth } = await watched(() =>
      Promise.all([post('/openai/v1/chat/completions', HOSTILE, API_TOKEN), post('/v1/generate', HOSTILE, apiKey)]),
    );
    const [openAi, v1] = result;
    const message = 'The request body holds more than 250000 JSON values (server.json_value_limit).';
    expect([openAi.status, v1.status]).toEqual([400, 400]);
    expect(JSON.parse(openAi.body)).toMatchObject({ error: { type: 'invalid_request_error', message } });
    expect(JSON.parse(v1.body)).toMatchObject({ error: { type: 'json_too_many_values', message } });
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_BOUND);
  }, 30_000);

  it('a legitimate 15 MiB base64 image from an API key still reaches the provider', async () => {
    const image = `data:image/png;base64,${'iVBORw0K'.repeat((15 * MiB) / 8)}`;
    const chat = { model: 'openai/gpt-test', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: image } }] }] };
    const answer = await post('/openai/v1/chat/completions', Buffer.from(JSON.stringify(chat)), apiKey);
    // It failed once in a whole-suite run (the emulator answered 500): a failure shows Tollgate's body and the emulator's own error.
    const failed = answer.status === 200 ? undefined : { body: answer.body.slice(0, 500), emulator: upstream.server.failures, sent: upstream.server.lastRequest?.rawBody.length };
    expect({ status: answer.status, failed }).toEqual({ status: 200, failed: undefined });
    expect(JSON.parse(answer.body)).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant' } }] });
    const sent = JSON.stringify(upstream.server.lastRequest?.body);
    expect(sent.length).toBeGreaterThan(image.length);
    expect(sent).toContain(image.slice(0, 100));
  }, 30_000);
});
