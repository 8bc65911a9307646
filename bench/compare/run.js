'use strict';
// bench/compare: Tollgate against Portkey's AI gateway (@portkey-ai/gateway from npm), a bare Node proxy (the
// floor for any gateway) and the OpenAI emulator called directly, in one run on loopback. chat/completions, non-streaming and streaming, through
// each; interleaved rounds (the order rotates every round), medians, ratios taken within a round, so load
// from other processes shifts every side alike; a gateway's added latency is taken against direct calls
// alternated one by one with its own. Then a fault run: the emulator fails a share of calls with
// 503 and resets a share of connections, Tollgate has a healthy fallback provider, and every client
// request must succeed with the gateway's memory flat.
// Usage: npm run build && node bench/compare/run.js
//   (env: CONNECTIONS=20 DURATION=5 ROUNDS=3 SAMPLES=1000 WARMUP=2 FAULT_DURATION=20 FAULT_5XX=0.1 FAULT_RESET=0.05
//    REQUEST_LOGS=1; 0 runs Tollgate with logs.requests false, as Portkey --headless writes no request logs;
//    PHASES=1 preloads phase-probe.js into Tollgate and the bare proxy and prints where a sequential request's
//    time goes in each, phase by phase; the probe's own channel subscriptions cost a few microseconds)
const autocannon = require('autocannon');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Pool } = require('undici');
const { ROOT, start, stop, throughput: loadRun } = require('../gateway/harness');
const { ADMIN_TOKEN, createKey } = require('../governance/variants');

const CONNECTIONS = Number(process.env.CONNECTIONS || 20);
const DURATION = Number(process.env.DURATION || 5);
const ROUNDS = Number(process.env.ROUNDS || 3);
const SAMPLES = Number(process.env.SAMPLES || 1000);
const WARMUP = Number(process.env.WARMUP || 2);
const FAULT_DURATION = Number(process.env.FAULT_DURATION || 20);
const FAULT_5XX = Number(process.env.FAULT_5XX ?? 0.1);
const FAULT_RESET = Number(process.env.FAULT_RESET ?? 0.05);
const REQUEST_LOGS = process.env.REQUEST_LOGS !== '0';
/** Where the governed target keeps keys and budget counters: memory (default) or redis (shared, as across replicas). */
const GOVERNANCE_STORE = process.env.GOVERNANCE_STORE === 'redis' ? 'redis' : 'memory';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const PHASES = process.env.PHASES === '1';

const API_KEY = 'sk-bench-upstream';
const API_TOKEN = 'bench-api-token';
const MODEL = 'gpt-test';
const EMULATOR = path.join(ROOT, 'bench', 'gateway', 'emulator-process.js');
const PORTKEY = path.join(ROOT, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
const MEMORY_PROBE = path.join(__dirname, 'memory-probe.js');
/** Node arguments that preload the phase probe into a gateway, when PHASES=1. */
const PHASE_PROBE_ARGS = PHASES ? ['--require', path.join(__dirname, 'phase-probe.js')] : [];
const BARE_PROXY = path.join(__dirname, 'bare-proxy.js');
const TARGETS = ['direct', 'bare-proxy', 'tollgate', 'governed', 'portkey'];
/** `governed`: the same Tollgate called with an API key, its ledger recording and a budget (far from spent) on every call. */
const GOVERNANCE_YAML = (store) =>
  [
    'version: 1',
    'governance:',
    `  admin_token: "${ADMIN_TOKEN}"`,
    `  keys: { store: ${store === 'redis' ? `redis, url: "${REDIS_URL}", key_prefix: "tollgate:bench-compare:keys:"` : 'memory'} }`,
    '  ledger: { store: memory }',
    `  budgets: { store: ${store === 'redis' ? `redis, url: "${REDIS_URL}", key_prefix: "tollgate:bench-compare:budgets:"` : 'memory'}, rules: [{ scope: key, id: "*", tokens: 1000000000000, period: day }] }`,
    '',
  ].join('\n');

const messages = [
  { role: 'system', content: 'You are a helpful assistant. Answer accurately and concisely.' },
  { role: 'user', content: 'Say hello' },
];

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function startEmulator(faults = {}) {
  return start([EMULATOR], { BENCH_API_KEY: API_KEY, BENCH_FAULT_5XX: String(faults.serverErrors ?? 0), BENCH_FAULT_RESET: String(faults.resets ?? 0) }, /ready (\S+)/);
}

/** The built server, started with the memory probe so the fault run can read its heap; `preload`: more Node arguments. */
function startTollgate(env, preload = []) {
  return start(['--expose-gc', '--require', MEMORY_PROBE, ...preload, path.join(ROOT, 'dist', 'src', 'main.js')], { PORT: '0', API_TOKEN, TOLLGATE_REQUEST_LOGS: String(REQUEST_LOGS), ...env }, /listening on (http:\/\/[^\s"]+)/);
}

async function startPortkey() {
  const port = await freePort();
  const portkey = await start([PORTKEY, '--headless', `--port=${port}`], {}, /(Ready for connections)/);
  return { ...portkey, match: `http://127.0.0.1:${port}` };
}

/** The request each target gets for one scenario: the same chat body everywhere, each with its own routing. */
function requests(urls, stream) {
  const emulator = new URL(urls.emulator);
  const chat = JSON.stringify({ model: MODEL, messages, ...(stream ? { stream: true } : {}) });
  const json = { 'content-type': 'application/json' };
  return {
    direct: { origin: emulator.origin, path: `${emulator.pathname}/chat/completions`, headers: { ...json, authorization: `Bearer ${API_KEY}` }, body: chat },
    'bare-proxy': { origin: urls.bareProxy, path: '/v1/chat/completions', headers: { ...json, authorization: `Bearer ${API_KEY}` }, body: chat },
    tollgate: { origin: urls.tollgate, path: '/openai/v1/chat/completions', headers: { ...json, authorization: `Bearer ${API_TOKEN}` }, body: chat },
    governed: { origin: urls.governed, path: '/openai/v1/chat/completions', headers: { ...json, authorization: `Bearer ${urls.governedKey}` }, body: chat },
    portkey: {
      origin: urls.portkey,
      path: '/v1/chat/completions',
      headers: { ...json, authorization: `Bearer ${API_KEY}`, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': urls.emulator },
      body: chat,
    },
  };
}

/** Fails early, with the answer, when a target does not answer a plain and a streamed call as expected. */
async function checkTargets(targets) {
  for (const stream of [false, true]) {
    for (const [name, request] of Object.entries(requests(targets, stream))) {
      const pool = new Pool(request.origin, { connections: 1 });
      try {
        const response = await pool.request({ method: 'POST', path: request.path, headers: request.headers, body: request.body });
        const text = await response.body.text();
        const streamed = String(response.headers['content-type']).startsWith('text/event-stream') && text.includes('[DONE]');
        if (response.statusCode !== 200 || streamed !== stream) {
          throw new Error(`${name} answered ${response.statusCode}${stream ? ' to a streamed call' : ''}: ${text.slice(0, 200)}`);
        }
      } finally {
        await pool.close();
      }
    }
  }
}

/** A chunk's first token: a delta whose content is not empty. */
const FIRST_TOKEN = /"delta":\{[^}]*"content":"[^"]/;

/** One call on a keep-alive pool: its total time and, for streams, the time to the first token. */
async function timedCall(pool, request, stream) {
  const started = performance.now();
  const response = await pool.request({ method: 'POST', path: request.path, headers: request.headers, body: request.body });
  if (response.statusCode < 200 || response.statusCode > 299) throw new Error(`${request.origin}${request.path} answered ${response.statusCode}: ${(await response.body.text()).slice(0, 200)}`);
  let firstToken;
  let seen = '';
  for await (const chunk of response.body) {
    if (stream && firstToken === undefined) {
      seen += chunk.toString();
      if (FIRST_TOKEN.test(seen)) firstToken = performance.now() - started;
    }
  }
  const total = performance.now() - started;
  if (stream && firstToken === undefined) throw new Error(`${request.origin}${request.path}: a stream without a content token`);
  return { total, firstToken };
}

/**
 * Latency without queueing: requests one after another, each target on its own keep-alive connection.
 * With `direct` given, every call through the target is followed by one straight to the emulator, so the
 * direct baseline that `added` subtracts is measured in the same window, under the same machine state
 * (scheduler placement and clock speed move loopback latency by more than a gateway adds).
 */
async function sequentialLatency(request, stream, direct) {
  const pools = { target: new Pool(request.origin, { connections: 1 }), direct: direct && new Pool(direct.origin, { connections: 1 }) };
  const totals = { target: [], direct: [] };
  const firstTokens = { target: [], direct: [] };
  try {
    for (let i = 0; i < SAMPLES + 200; i++) {
      for (const side of direct ? ['target', 'direct'] : ['target']) {
        const call = await timedCall(pools[side], side === 'target' ? request : direct, stream);
        // The first 200 warm the JIT and the upstream pools.
        if (i < 200) continue;
        totals[side].push(call.total);
        if (stream) firstTokens[side].push(call.firstToken);
      }
    }
  } finally {
    await Promise.all(Object.values(pools).map((pool) => pool?.close()));
  }
  const summary = (side) => ({ p50: percentile(totals[side], 0.5), p99: percentile(totals[side], 0.99), ttft50: stream ? percentile(firstTokens[side], 0.5) : undefined });
  const target = summary('target');
  if (!direct) return target;
  const baseline = summary('direct');
  return { ...target, added: target.p50 - baseline.p50, addedTtft: stream ? target.ttft50 - baseline.ttft50 : undefined };
}

function percentile(values, share) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * share)];
}

/** Requests per second at CONNECTIONS, and the CPU microseconds each watched process spent per request. */
function throughput(request, duration, watched = {}) {
  return loadRun(request, { duration, connections: CONNECTIONS, watched });
}

/** Resident set size in MiB from /proc (Linux); undefined elsewhere. */
function rssMiB(pid) {
  try {
    const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return Number(line.split(/\s+/)[1]) / 1024;
  } catch {
    return undefined;
  }
}

const median = (values) => {
  const sorted = values.filter((v) => v !== undefined).sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[Math.floor(sorted.length / 2)];
};
const fmt = (value, digits = 2, width = 9) => (value === undefined ? '-' : value.toFixed(digits)).padStart(width);
const verdict = (ok) => (ok ? 'met' : 'MISSED');

async function compare() {
  const emulator = await startEmulator();
  const processes = [emulator];
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-compare-governed-'));
  try {
    // The plain target runs without governance (the ledger, on by default, off), so `governed` shows its whole cost.
    fs.writeFileSync(path.join(configDir, 'plain.yaml'), 'version: 1\ngovernance: { ledger: { enabled: false } }\n');
    fs.writeFileSync(path.join(configDir, 'governed.yaml'), GOVERNANCE_YAML(GOVERNANCE_STORE));
    const upstream = { OPENAI_API_KEY: API_KEY, OPENAI_URL: emulator.match, OPENAI_CHAT_MODEL: MODEL, TOLLGATE_DEFAULT_PROVIDER: 'openai' };
    /**
     * Both Tollgates, started afresh every round: one process can run several per cent slower than another for
     * its whole life, which a single pair would carry into every round's governed/plain ratio.
     */
    const startTollgates = async () => {
      const tollgate = await startTollgate({ TOLLGATE_CONFIG: path.join(configDir, 'plain.yaml'), ...upstream }, PHASE_PROBE_ARGS);
      processes.push(tollgate);
      const governed = await startTollgate({ TOLLGATE_CONFIG: path.join(configDir, 'governed.yaml'), ...upstream });
      processes.push(governed);
      return { tollgate, governed, governedKey: await createKey(governed.match, 'bench-compare') };
    };
    const portkey = await startPortkey();
    processes.push(portkey);
    const bareProxy = await start([...PHASE_PROBE_ARGS, BARE_PROXY, emulator.match], {}, /ready (\S+)/);
    processes.push(bareProxy);
    let tollgates = await startTollgates();
    const urlsOf = ({ tollgate, governed, governedKey }) => ({
      emulator: emulator.match,
      tollgate: tollgate.match,
      portkey: portkey.match,
      bareProxy: bareProxy.match,
      governed: governed.match,
      governedKey,
    });
    const watchedOf = ({ tollgate, governed }) => ({ tollgate: tollgate.child.pid, governed: governed.child.pid, portkey: portkey.child.pid, 'bare-proxy': bareProxy.child.pid });
    const scenariosOf = (urls) => [
      { name: 'chat', stream: false, targets: requests(urls, false) },
      { name: 'chat-stream', stream: true, targets: requests(urls, true) },
    ];
    await checkTargets(urlsOf(tollgates));
    let scenarios = scenariosOf(urlsOf(tollgates));

    process.stdout.write(
      `bench/compare: Tollgate /openai/v1/chat/completions, a bare Node proxy, Portkey gateway ` +
        `${require('@portkey-ai/gateway/package.json').version}, OpenAI emulator direct; Node ${process.version}, ${os.cpus().length} CPUs; ` +
        `Tollgate access log lines ${REQUEST_LOGS ? 'on' : 'off (REQUEST_LOGS=0)'}\n` +
        `${CONNECTIONS} connections x ${DURATION} s for req/s; ${SAMPLES} sequential requests for p50/p99/TTFT (ms), each through a gateway followed by one direct for its added latency; medians of ${ROUNDS} interleaved rounds, both Tollgates started afresh each round\n\n`,
    );
    for (const scenario of scenarios) {
      for (const target of TARGETS) await throughput(scenario.targets[target], WARMUP);
    }

    const samples = {};
    for (let round = 0; round < ROUNDS; round++) {
      if (round > 0) {
        await Promise.all([stop(tollgates.tollgate.child), stop(tollgates.governed.child)]);
        processes.splice(0, processes.length, ...processes.filter((p) => p !== tollgates.tollgate && p !== tollgates.governed));
        tollgates = await startTollgates();
        scenarios = scenariosOf(urlsOf(tollgates));
        for (const scenario of scenarios) for (const target of ['tollgate', 'governed']) await throughput(scenario.targets[target], WARMUP);
      }
      const watched = watchedOf(tollgates);
      // The order rotates so a slow drift of the machine favours no target.
      const order = TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length]);
      for (const scenario of scenarios) {
        for (const target of order) {
          const request = scenario.targets[target];
          const latency = await sequentialLatency(request, scenario.stream, target === 'direct' ? undefined : scenario.targets.direct);
          const load = await throughput(request, DURATION, watched);
          const rss = watched[target] === undefined ? undefined : rssMiB(watched[target]);
          (samples[`${scenario.name}/${target}`] ??= []).push({ ...latency, ...load, rss });
        }
      }
    }

    process.stdout.write('scenario     target         req/s     p50     p99  TTFT p50  added p50  added TTFT  CPU us/req  RSS MiB\n');
    const lines = [];
    for (const scenario of scenarios) {
      const rows = {};
      for (const target of TARGETS) {
        const runs = samples[`${scenario.name}/${target}`];
        const direct = samples[`${scenario.name}/direct`];
        rows[target] = {
          rps: median(runs.map((r) => r.rps)),
          p50: median(runs.map((r) => r.p50)),
          p99: median(runs.map((r) => r.p99)),
          ttft50: median(runs.map((r) => r.ttft50)),
          added: median(runs.map((r) => r.added)),
          addedTtft: median(runs.map((r) => r.addedTtft)),
          cpu: median(runs.map((r) => r.cpu[target])),
          rss: median(runs.map((r) => r.rss)),
          share: median(runs.map((r, i) => r.rps / direct[i].rps)),
        };
        const row = rows[target];
        process.stdout.write(
          `${scenario.name.padEnd(12)} ${target.padEnd(11)} ${fmt(row.rps, 0)} ${fmt(row.p50, 2, 7)} ${fmt(row.p99, 2, 7)} ${fmt(row.ttft50, 2)} ` +
            `${fmt(row.added, 3, 10)} ${fmt(row.addedTtft, 3, 11)} ${fmt(row.cpu, 0, 11)} ${fmt(row.rss, 1, 8)}\n`,
        );
      }
      const tollgateRuns = samples[`${scenario.name}/tollgate`];
      const portkeyRuns = samples[`${scenario.name}/portkey`];
      const speedups = tollgateRuns.map((r, i) => r.rps / portkeyRuns[i].rps);
      const speedup = median(speedups);
      const addedShare = rows.tollgate.added / rows.portkey.added;
      const addedShares = tollgateRuns.map((r, i) => r.added / portkeyRuns[i].added);
      const governedCpu = samples[`${scenario.name}/governed`].map((r, i) => r.cpu.governed / tollgateRuns[i].cpu.tollgate);
      lines.push(
        `${scenario.name}: governance (API key, ledger, budget; ${GOVERNANCE_STORE} stores) CPU per request ${rows.governed.cpu.toFixed(0)} vs ${rows.tollgate.cpu.toFixed(0)} us = ` +
          `+${(100 * (rows.governed.cpu / rows.tollgate.cpu - 1)).toFixed(1)}% (rounds ${governedCpu.map((s) => `${(100 * (s - 1)).toFixed(1)}%`).join(' ')}; target <= +10%: ${verdict(rows.governed.cpu <= 1.1 * rows.tollgate.cpu)}); ` +
          `req/s ${rows.governed.rps.toFixed(0)} vs ${rows.tollgate.rps.toFixed(0)}; governed/Portkey req/s ${median(samples[`${scenario.name}/governed`].map((r, i) => r.rps / portkeyRuns[i].rps)).toFixed(2)}x`,
      );
      lines.push(
        `${scenario.name}: Tollgate/Portkey req/s ${speedup.toFixed(2)}x (rounds ${speedups.map((s) => s.toFixed(2)).join(' ')}; target >= 4x: ${verdict(speedup >= 4)}); ` +
          `CPU per request Portkey/Tollgate ${(rows.portkey.cpu / rows.tollgate.cpu).toFixed(2)}x (steadier than req/s on a shared machine); ` +
          `share of direct req/s: Tollgate ${(100 * rows.tollgate.share).toFixed(0)}%, bare proxy ${(100 * rows['bare-proxy'].share).toFixed(0)}%, Portkey ${(100 * rows.portkey.share).toFixed(0)}%; ` +
          `added p50 Tollgate ${rows.tollgate.added.toFixed(3)} ms vs Portkey ${rows.portkey.added.toFixed(3)} ms = ${addedShare.toFixed(2)} (rounds ${addedShares.map((s) => s.toFixed(2)).join(' ')}; target <= 0.25: ${verdict(addedShare <= 0.25)})` +
          (scenario.stream ? `; added TTFT p50 ${rows.tollgate.addedTtft.toFixed(3)} ms (target <= 1 ms: ${verdict(rows.tollgate.addedTtft <= 1)})` : ''),
      );
    }
    // Read right after each load run (no forced GC: what the machine actually holds), median over runs.
    const rssAfterLoad = (target) => median(Object.entries(samples).filter(([key]) => key.endsWith(`/${target}`)).flatMap(([, runs]) => runs.map((r) => r.rss)));
    const rss = { tollgate: rssAfterLoad('tollgate'), portkey: rssAfterLoad('portkey') };
    lines.push(
      `RSS after load (median over load runs): Tollgate ${rss.tollgate.toFixed(1)} MiB, Portkey ${rss.portkey.toFixed(1)} MiB (target Tollgate <= Portkey: ${verdict(rss.tollgate <= rss.portkey)})`,
    );
    process.stdout.write(`\n${lines.join('\n')}\n`);
    if (PHASES) await printPhases({ 'bare-proxy': bareProxy.child, tollgate: tollgates.tollgate.child });
  } finally {
    await Promise.all(processes.map((p) => stop(p.child)));
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

/** Stops each gateway and prints the phase medians its phase probe wrote on the way out. */
async function printPhases(children) {
  const readings = {};
  for (const [name, child] of Object.entries(children)) {
    let output = '';
    child.stderr.on('data', (chunk) => (output += chunk.toString()));
    await stop(child);
    const line = /^phases (.*)$/m.exec(output);
    if (!line) throw new Error(`${name} wrote no phases`);
    readings[name] = JSON.parse(line[1]);
  }
  for (const scenario of Object.keys(readings.tollgate)) {
    const counts = Object.entries(readings).map(([name, r]) => `${r[scenario].requests} ${name}`).join(', ');
    process.stdout.write(`\nwhere a sequential ${scenario} request's time goes in each gateway (PHASES=1; medians in microseconds over ${counts} requests):\n`);
    for (const phase of Object.keys(readings.tollgate[scenario]).filter((key) => key !== 'requests')) {
      process.stdout.write(`  ${phase.padEnd(48)} ${Object.entries(readings).map(([name, r]) => `${name} ${fmt(r[scenario][phase] ?? undefined, 1, 6)}`).join('   ')}\n`);
    }
  }
}

/** Asks the memory probe in the server for a reading taken right after a full garbage collection. */
function memoryReading(child) {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk) => {
      buffered += chunk.toString();
      const match = /memory rss=(\d+) heap=(\d+)/.exec(buffered);
      if (!match) return;
      child.stderr.off('data', onData);
      clearTimeout(timer);
      resolve({ rss: Number(match[1]) / 2 ** 20, heap: Number(match[2]) / 2 ** 20 });
    };
    const timer = setTimeout(() => reject(new Error('the memory probe did not answer')), 5000);
    child.stderr.on('data', onData);
    child.kill('SIGWINCH');
  });
}

async function faultRun() {
  const faulty = await startEmulator({ serverErrors: FAULT_5XX, resets: FAULT_RESET });
  const processes = [faulty];
  const config = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-compare-'));
  try {
    const healthy = await startEmulator();
    processes.push(healthy);
    // Short retry waits so a reset costs milliseconds, not the default second; openai_compatible is the fallback.
    // No ledger: its memory store is a ring that fills up to 100,000 entries by design, which the flat-memory check would count as growth.
    fs.writeFileSync(
      path.join(config, 'tollgate.yaml'),
      'version: 1\nai:\n  retry_delay: 0.01\n  default_provider: openai\n  fallback_providers: [openai_compatible]\ngovernance: { ledger: { enabled: false } }\n',
    );
    const tollgate = await startTollgate({
      TOLLGATE_CONFIG: path.join(config, 'tollgate.yaml'),
      OPENAI_API_KEY: API_KEY,
      OPENAI_URL: faulty.match,
      OPENAI_CHAT_MODEL: MODEL,
      OPENAI_COMPATIBLE_API_KEY: API_KEY,
      OPENAI_COMPATIBLE_URL: healthy.match,
      OPENAI_COMPATIBLE_CHAT_MODEL: MODEL,
    });
    processes.push(tollgate);
    const request = requests({ emulator: faulty.match, tollgate: tollgate.match }, false).tollgate;

    await throughput(request, WARMUP).catch(() => undefined);
    // Readings after a full GC at the start and every quarter of the run: a leak grows with every quarter,
    // while the allocator's and V8's first expansion under load shows once, in the first.
    const readings = [await memoryReading(tollgate.child)];
    const load = autocannon({ url: request.origin + request.path, method: 'POST', headers: request.headers, body: request.body, connections: CONNECTIONS, duration: FAULT_DURATION });
    const quarters = setInterval(() => memoryReading(tollgate.child).then((reading) => readings.push(reading)), (FAULT_DURATION * 1000) / 4);
    const result = await load;
    clearInterval(quarters);
    readings.push(await memoryReading(tollgate.child));
    const failed = result.non2xx + result.errors + result.timeouts;

    let faults = '';
    faulty.child.stdout.on('data', (chunk) => (faults += chunk.toString()));
    await stop(faulty.child);
    const served = /served (\d+) requests: (\d+) 5xx, (\d+) resets/.exec(faults);

    const first = readings[1] ?? readings[0];
    const last = readings[readings.length - 1];
    const flat = last.heap <= first.heap * 1.1 && last.rss <= first.rss * 1.1;
    process.stdout.write(
      `\nfault run: ${request.path} at ${CONNECTIONS} connections x ${FAULT_DURATION} s; the primary emulator answers ${100 * FAULT_5XX}% 503 and resets ${100 * FAULT_RESET}% of connections, ` +
        `fallback openai_compatible on a healthy emulator\n` +
        `  client requests: ${result.requests.total} sent, ${result['2xx']} succeeded, ${failed} failed (target 100%: ${verdict(failed === 0 && result['2xx'] > 0)})\n` +
        (served ? `  primary emulator: ${served[1]} calls, ${served[2]} answered 503, ${served[3]} reset\n` : '') +
        `  Tollgate memory after a full GC, at the start and each quarter: RSS ${readings.map((r) => r.rss.toFixed(1)).join(' ')} MiB; ` +
        `heap ${readings.map((r) => r.heap.toFixed(1)).join(' ')} MiB\n` +
        `  first quarter -> end: RSS ${first.rss.toFixed(1)} -> ${last.rss.toFixed(1)} MiB, heap ${first.heap.toFixed(1)} -> ${last.heap.toFixed(1)} MiB (target flat, within 10%: ${verdict(flat)})\n`,
    );
  } finally {
    await Promise.all(processes.map((p) => stop(p.child)));
    fs.rmSync(config, { recursive: true, force: true });
  }
}

async function main() {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'src', 'main.js'))) throw new Error('dist/src/main.js is missing: run npm run build first');
  if (process.argv[2] !== 'faults') await compare();
  if (process.argv[2] !== 'peers') await faultRun();
}

main().catch((error) => {
  process.stderr.write(`bench/compare: ${error.stack}\n`);
  process.exit(1);
});
