/**
 * A rolling deploy behind a real load balancer: three server processes (node dist/src/main.js) share one Redis
 * (API keys, budget counters) and one PostgreSQL ledger, behind HAProxy from Debian's packages, started here
 * on loopback with its default keep-alive on both sides and a health check on /readyz. Twenty clients send
 * chat completions and streamed ones through it while each process in turn gets SIGTERM and is replaced by a
 * new one on its port, as a rolling deploy does. Asserted: no request fails; the ledger holds exactly the
 * answered calls, one row each; a key whose budget covers N calls gets exactly N answers across the three
 * processes and their replacements; HAProxy marks each process down before it stops listening; each process
 * drains and exits 0 well within its deadline. The figures are printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { bearerCall } from './support/bearer-call';
import { buildDistIfStale, ROOT } from './support/cli-run';
import { type ServerProcess, ServerProcesses } from './support/server-process';
import { dropLedgerTables, dropRedisKeys } from './support/store-cleanup';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const ADMIN_TOKEN = 'admin-token-for-rolling-restart';
const UPSTREAM_KEY = 'sk-emulator-rolling-restart';
const CLIENTS = 20;
/** Of the clients, these call with the budgeted key, one call every BUDGET_PACE_MS, so its budget runs out mid-deploy. */
const BUDGET_CLIENTS = 2;
const BUDGET_PACE_MS = 250;
const BUDGET_CALLS = 60;
/**
 * A call's estimate and its cost are the same 10 tokens, so a budget of 10 N admits exactly N whatever is in
 * flight: "Hello fleet" is 3 tokens by length plus 4 for the message, max_tokens 3 is reserved in full, and the
 * emulator reports 7 prompt and 3 completion tokens.
 */
const TOKENS_PER_CALL = 10;
const GRACE_SECONDS = 2;
const DEADLINE_SECONDS = 15;
/** HAProxy checks /readyz every CHECK_INTERVAL_MS and takes a server out after three failed checks. */
const CHECK_INTERVAL_MS = 200;
/** Bounds on the load, whatever happens to the test: no client sends more, or for longer. */
const MAX_CALLS_PER_CLIENT = 3000;
const MAX_LOAD_MS = 180_000;

const run = randomUUID().slice(0, 8);
const keyPrefix = `tollgate:test-rolling-restart:${run}:`;
const ledgerTable = `ledger_rolling_${run}`;

interface Instance {
  name: string;
  port: number;
  process: ServerProcess;
  exited: Promise<{ code: number | null; at: number }>;
}

interface Outcome {
  key: 'fleet' | 'budget';
  stream: boolean;
  requestId: string;
  status: number;
  /** Why the answer is not a success (or, for the budgeted key, not a budget refusal either). */
  failure?: string;
  refused?: boolean;
}

interface Restart {
  name: string;
  signalled: number;
  markedDown: number;
  drainBegan: number;
  drainMs: number;
  exitCode: number | null;
  exited: number;
  replacementUp: number;
}

let work: string;
let configFile: string;
let upstream: OpenAiEmulator;
let haproxy: ChildProcess;
let haproxyOutput = '';
/** HAProxy's server state changes, as it reports them on stderr, with the time each line arrived. */
const stateChanges: Array<{ server: string; state: 'UP' | 'DOWN'; at: number }> = [];
const servers = new ServerProcesses();

/** Ports free right now on loopback, taken and released together so they differ. */
async function freePorts(count: number): Promise<number[]> {
  const listeners: NetServer[] = await Promise.all(
    Array.from({ length: count }, () => new Promise<NetServer>((resolveListen) => {
      const listener = createServer();
      listener.listen(0, '127.0.0.1', () => resolveListen(listener));
    })),
  );
  const ports = listeners.map((listener) => (listener.address() as { port: number }).port);
  await Promise.all(listeners.map((listener) => new Promise((closed) => listener.close(closed))));
  return ports;
}

function startInstance(name: string, port: number): Instance {
  const started = servers.startNode([MAIN, '--config', configFile, '--port', String(port)], work, { startTimeoutMs: 150_000 });
  const exited = new Promise<{ code: number | null; at: number }>((resolveExit) =>
    started.child.once('exit', (code) => resolveExit({ code, at: Date.now() })),
  );
  return { name, port, process: started, exited };
}

function haproxyConfig(frontendPort: number, instances: Instance[]): string {
  return [
    'global',
    '  maxconn 1000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout check 3s',
    'frontend gateway',
    `  bind 127.0.0.1:${frontendPort}`,
    '  default_backend tollgate',
    'backend tollgate',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    `  default-server inter ${CHECK_INTERVAL_MS} fall 3 rise 2`,
    ...instances.map((instance) => `  server ${instance.name} 127.0.0.1:${instance.port} check`),
    '',
  ].join('\n');
}

function startHaproxy(file: string): ChildProcess {
  // Debian installs it in /usr/sbin, outside a non-root PATH.
  const child = spawn('haproxy', ['-db', '-f', file], { env: { PATH: `${process.env.PATH}:/usr/sbin:/usr/local/sbin` }, stdio: ['ignore', 'pipe', 'pipe'] });
  const onOutput = (chunk: Buffer) => {
    const at = Date.now();
    haproxyOutput += chunk.toString();
    for (const match of chunk.toString().matchAll(/Server tollgate\/(\w+) is (UP|DOWN)/g)) stateChanges.push({ server: match[1], state: match[2] as 'UP' | 'DOWN', at });
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);
  child.on('error', (error: NodeJS.ErrnoException) => {
    haproxyOutput += error.code === 'ENOENT' ? 'haproxy is not installed: apt-get install -y haproxy (npm test installs it through scripts/start-services.sh)' : error.message;
  });
  return child;
}

async function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 150_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\nHAProxy:\n${haproxyOutput}\nTollgate:\n${notReadyLines()}`);
    await new Promise((wait) => setTimeout(wait, 10));
  }
}

/** Polls `url` until it answers 200 (HAProxy listening and routing). */
async function waitForAnswer(url: string): Promise<void> {
  const until = Date.now() + 10_000;
  while ((await fetch(url).then((response) => response.status, () => 0)) !== 200) {
    if (Date.now() > until) throw new Error(`no answer from ${url}\nHAProxy:\n${haproxyOutput}`);
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

/** Why the processes reported not ready, from their logs, for a failure's message. */
let notReadyLines = () => '';

const lastState = (server: string) => stateChanges.filter((change) => change.server === server).pop()?.state;

const stateAfter = (server: string, state: 'UP' | 'DOWN', since: number) => () =>
  stateChanges.find((change) => change.server === server && change.state === state && change.at >= since)?.at;

/** When the process logged a line holding `text`, by the line's own time (logs are written in batches). */
function loggedAt(instance: Instance, text: string): number | undefined {
  const line = instance.process.output().split('\n').find((candidate) => candidate.includes(text));
  const time = line === undefined ? undefined : /"time":(\d+)/.exec(line);
  return time ? Number(time[1]) : undefined;
}

/** One call through the load balancer; a stream must end with its [DONE] frame. */
async function callOnce(origin: string, bearer: string, key: Outcome['key'], stream: boolean, requestId: string): Promise<Outcome> {
  const body = { model: 'openai/gpt-test', max_tokens: 3, stream, messages: [{ role: 'user', content: 'Hello fleet' }] };
  try {
    const response = await fetch(`${origin}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const outcome: Outcome = { key, stream, requestId, status: response.status };
    if (response.status === 429 && key === 'budget' && (JSON.parse(text) as { error?: { code?: string } }).error?.code === 'budget_exceeded') return { ...outcome, refused: true };
    if (response.status !== 200) return { ...outcome, failure: `${response.status} ${text.slice(0, 200)}` };
    const complete = stream ? text.includes('data: [DONE]') && text.includes('"content"') : Boolean((JSON.parse(text) as { choices?: Array<{ message?: { content?: string } }> }).choices?.[0]?.message?.content);
    return complete ? outcome : { ...outcome, failure: `incomplete answer: ${text.slice(0, 200)}` };
  } catch (error) {
    return { key, stream, requestId, status: 0, failure: `${(error as Error).name}: ${(error as Error).message} ${String((error as { cause?: unknown }).cause ?? '')}` };
  }
}

async function createKey(origin: string, body: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const created = await bearerCall(origin, 'POST', '/v1/admin/keys', ADMIN_TOKEN, body);
  expect(created.status).toBe(201);
  return { key: created.body.key as string, id: created.body.id as string };
}

/** SIGTERM to each process in turn; once it exited, a replacement on its port, taken back into rotation by HAProxy. */
async function restartInTurn(instances: Instance[], restarts: Restart[]): Promise<void> {
  for (const [index, instance] of instances.entries()) {
    // Every process in rotation before the next one leaves.
    for (const { name } of instances) await waitFor(() => (lastState(name) === 'DOWN' ? undefined : true), `${name} in rotation`);
    const signalled = Date.now();
    instance.process.child.kill('SIGTERM');
    const markedDown = await waitFor(stateAfter(instance.name, 'DOWN', signalled), `HAProxy to mark ${instance.name} down`);
    const ended = await instance.exited;
    const drainBegan = loggedAt(instance, 'no new connections') ?? Number.NaN;
    const drainMs = Number(/drained in (\d+) ms/.exec(instance.process.output())?.[1] ?? Number.NaN);
    const replacement = startInstance(instance.name, instance.port);
    instances[index] = replacement;
    await replacement.process.url;
    const replacementUp = await waitFor(stateAfter(instance.name, 'UP', ended.at), `HAProxy to take ${instance.name}'s replacement in`);
    restarts.push({ name: instance.name, signalled, markedDown, drainBegan, drainMs, exitCode: ended.code, exited: ended.at, replacementUp });
    process.stdout.write(`rolling restart: ${instance.name} replaced\n`);
  }
}

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-rolling-'));
  upstream = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY, chatModels: ['gpt-test'] });
  configFile = join(work, 'tollgate.yaml');
  writeFileSync(
    configFile,
    [
      'version: 1',
      `server: { shutdown_grace: ${GRACE_SECONDS}, shutdown_timeout: ${DEADLINE_SECONDS} }`,
      'api: { token: "api-token-unused-here" }',
      'logs: { requests: false }',
      'ai: { retry_attempts: 0 }',
      'providers:',
      `  openai: { url: "${upstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, embedding_model: embed-test, timeout: 10 }`,
      'governance:',
      `  keys: { store: redis, url: "${REDIS_URL}", key_prefix: "${keyPrefix}keys:" }`,
      `  admin_token: "${ADMIN_TOKEN}"`,
      `  budgets: { store: redis, url: "${REDIS_URL}", key_prefix: "${keyPrefix}budgets:" }`,
      `  ledger: { store: postgres, url: "${PG_URL}", table: ${ledgerTable}, flush_interval: 0.2 }`,
      '',
    ].join('\n'),
  );
}, 120_000);

afterAll(async () => {
  haproxy?.kill('SIGKILL');
  await servers.stopAll('SIGKILL');
  await dropRedisKeys(REDIS_URL, keyPrefix);
  await dropLedgerTables(PG_URL, ledgerTable);
  await upstream?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a rolling restart of three processes behind HAProxy', () => {
  it('loses no request, no ledger entry and no budget exactness, and each process leaves rotation before it stops listening', async () => {
    const [frontendPort, ...ports] = await freePorts(4);
    const instances = ports.map((port, index) => startInstance(`t${index + 1}`, port));
    notReadyLines = () => instances.flatMap((instance) => instance.process.output().split('\n').filter((line) => line.includes('not ready'))).join('\n');
    await Promise.all(instances.map((instance) => instance.process.url));
    const haproxyFile = join(work, 'haproxy.cfg');
    writeFileSync(haproxyFile, haproxyConfig(frontendPort, instances));
    haproxy = startHaproxy(haproxyFile);
    const origin = `http://127.0.0.1:${frontendPort}`;
    await waitForAnswer(`${origin}/healthz`);

    const fleetKey = await createKey(`http://127.0.0.1:${ports[0]}`, { tenant: 't-fleet', name: 'fleet' });
    const budgetKey = await createKey(`http://127.0.0.1:${ports[0]}`, { tenant: 't-fleet', name: 'budgeted', budget_tokens: BUDGET_CALLS * TOKENS_PER_CALL, period: 'day' });
    // Streams take a while (their chunks 40 ms apart), so streams are in flight when each SIGTERM comes; the
    // health probes behind /readyz (GET /v1/models) are answered at once.
    upstream.server.inject({ kind: 'stream', chunkDelayMs: 40 }, Number.MAX_SAFE_INTEGER, '/v1/chat/completions');

    const outcomes: Outcome[] = [];
    let loading = true;
    const began = Date.now();
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      const budgeted = client < BUDGET_CLIENTS;
      for (let call = 0; loading && call < MAX_CALLS_PER_CLIENT && Date.now() - began < MAX_LOAD_MS; call += 1) {
        const requestId = `roll-${run}-${client}-${call}`;
        const stream = call % 2 === 1;
        outcomes.push(await callOnce(origin, budgeted ? budgetKey.key : fleetKey.key, budgeted ? 'budget' : 'fleet', stream, requestId));
        if (budgeted) await new Promise((wait) => setTimeout(wait, BUDGET_PACE_MS));
      }
    });

    const restarts: Restart[] = [];
    try {
      await new Promise((wait) => setTimeout(wait, 1500));
      await restartInTurn(instances, restarts);
      await new Promise((wait) => setTimeout(wait, 1000));
    } finally {
      loading = false;
      await Promise.all(clients);
    }
    const loadSeconds = (Date.now() - began) / 1000;
    // A graceful stop of the replacements flushes what their ledgers still hold.
    await servers.stopAll('SIGTERM');

    const fleet = outcomes.filter((outcome) => outcome.key === 'fleet');
    const budget = outcomes.filter((outcome) => outcome.key === 'budget');
    const answeredBudget = budget.filter((outcome) => outcome.status === 200 && !outcome.failure);
    const sql = new Client({ connectionString: PG_URL });
    await sql.connect();
    const ledger = await sql.query<{ key_id: string; request_id: string }>(`SELECT key_id, request_id FROM ${ledgerTable}`).finally(() => sql.end());
    const rowsOf = (keyId: string) => ledger.rows.filter((row) => row.key_id === keyId).map((row) => row.request_id).sort();

    const figures = [
      `rolling restart: ${outcomes.length} requests in ${loadSeconds.toFixed(1)} s from ${CLIENTS} clients (${fleet.filter((outcome) => outcome.stream).length} streamed), ` +
        `${fleet.filter((outcome) => outcome.failure).length} failed; budgeted key: ${answeredBudget.length} answered, ${budget.filter((outcome) => outcome.refused).length} refused (budget for ${BUDGET_CALLS})`,
      ...restarts.map(
        (restart) =>
          `  ${restart.name}: out of HAProxy ${restart.markedDown - restart.signalled} ms after SIGTERM, stopped listening after ${restart.drainBegan - restart.signalled} ms (grace ${GRACE_SECONDS} s), ` +
          `drained in ${restart.drainMs} ms, exit ${restart.exitCode} ${restart.exited - restart.signalled} ms after SIGTERM; replacement in rotation ${restart.replacementUp - restart.exited} ms after the exit`,
      ),
      `  ledger: ${ledger.rows.length} rows`,
    ];
    process.stdout.write(`${figures.join('\n')}\n`);

    expect(fleet.filter((outcome) => outcome.failure).map((outcome) => `${outcome.requestId}: ${outcome.failure}`)).toEqual([]);
    expect(budget.filter((outcome) => outcome.failure).map((outcome) => `${outcome.requestId}: ${outcome.failure}`)).toEqual([]);
    expect(fleet.length).toBeGreaterThan(200);
    expect(answeredBudget).toHaveLength(BUDGET_CALLS);
    expect(budget.length).toBeGreaterThan(BUDGET_CALLS);
    // Every answered call is in the ledger once, and nothing else is.
    expect(rowsOf(fleetKey.id)).toEqual(fleet.map((outcome) => outcome.requestId).sort());
    expect(rowsOf(budgetKey.id)).toEqual(answeredBudget.map((outcome) => outcome.requestId).sort());
    for (const restart of restarts) {
      expect(restart.exitCode).toBe(0);
      expect(restart.markedDown).toBeLessThan(restart.drainBegan);
      expect(restart.exited - restart.signalled).toBeLessThan(DEADLINE_SECONDS * 1000);
    }
  }, 600_000);
});
