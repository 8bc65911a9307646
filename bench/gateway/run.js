'use strict';
// bench/gateway: POST /v1/generate and /v1/embeddings through the Tollgate server to the OpenAI emulator,
// against the same calls sent to the emulator directly, in one run. Prints req/s (autocannon, concurrent),
// p50/p99 latency (sequential, one keep-alive connection, sub-millisecond), the added latency and, on Linux,
// each process's CPU time per request (steadier than req/s on a shared machine).
// The same direct calls also go through a bare Node proxy (bench/compare/bare-proxy.js: no routing, auth,
// validation, mapping or observation), whose share of direct req/s is the ceiling of one proxy hop here.
// Direct, bare-proxy and gateway measurements rotate in ROUNDS rounds and the medians are reported, so load
// from other processes shifts every side alike; the ratios are per round, against the direct figure of that round.
// Targets (issue 3): added p50 <= 1 ms, gateway throughput >= 0.5x direct.
// Usage: npm run build && node bench/gateway/run.js
//   (env: DURATION=5 CONNECTIONS=10 SAMPLES=2000 WARMUP=2 ROUNDS=3)
const path = require('node:path');
const { Pool } = require('undici');
const { scenarios, start, startServers, stop, throughput: loadRun } = require('./harness');

const DURATION = Number(process.env.DURATION || 5);
const CONNECTIONS = Number(process.env.CONNECTIONS || 10);
const SAMPLES = Number(process.env.SAMPLES || 2000);
const WARMUP = Number(process.env.WARMUP || 2);
const ROUNDS = Number(process.env.ROUNDS || 3);
const BARE_PROXY = path.join(__dirname, '..', 'compare', 'bare-proxy.js');
const ROUTES = ['direct', 'bare-proxy', 'gateway'];

/** Each scenario with a third route: the direct call sent through the bare proxy, which keeps the path. */
const withBareProxy = (list, bareProxyUrl) => list.map((scenario) => ({ ...scenario, 'bare-proxy': { ...scenario.direct, origin: bareProxyUrl } }));

/** One keep-alive connection, requests one after another: latency without queueing. */
async function sequentialLatency(origin, request) {
  const pool = new Pool(origin, { connections: 1 });
  const timings = [];
  try {
    for (let i = 0; i < SAMPLES + 200; i++) {
      const started = performance.now();
      const response = await pool.request({ method: 'POST', path: request.path, headers: request.headers, body: request.body });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${origin}${request.path} answered ${response.statusCode}`);
      // The first 200 warm the JIT and the upstream pool.
      if (i >= 200) timings.push(performance.now() - started);
    }
  } finally {
    await pool.close();
  }
  timings.sort((a, b) => a - b);
  return { p50: timings[Math.floor(timings.length * 0.5)], p99: timings[Math.floor(timings.length * 0.99)] };
}

/** Requests per second, and the CPU microseconds each watched process spent per request meanwhile. */
function throughput(origin, request, duration = DURATION, watched = {}) {
  return loadRun({ ...request, origin }, { duration, connections: CONNECTIONS, watched });
}

const fmt = (value, digits = 2) => (value === undefined ? '-' : value.toFixed(digits)).padStart(9);
const median = (values) => {
  const sorted = values.filter((v) => v !== undefined).sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[Math.floor(sorted.length / 2)];
};

async function main() {
  const { emulator, gateway } = await startServers();
  const bareProxy = await start([BARE_PROXY, emulator.match], {}, /ready (\S+)/).catch(async (error) => {
    await Promise.all([stop(gateway.child), stop(emulator.child)]);
    throw error;
  });
  try {
    const watched = { emulator: emulator.child.pid, gateway: gateway.child.pid, 'bare-proxy': bareProxy.child.pid };
    const measured = withBareProxy(scenarios(emulator.match, gateway.match), bareProxy.match);

    // Warm-up: JIT, connection pools and lazy module state, so the first scenario measured is not penalised.
    for (const scenario of measured) {
      for (const route of ROUTES) await throughput(scenario[route].origin, scenario[route], WARMUP);
    }
    process.stdout.write(
      `bench/gateway: ${CONNECTIONS} connections x ${DURATION} s for req/s; ${SAMPLES} sequential requests for p50/p99 (ms); ` +
        `medians of ${ROUNDS} interleaved rounds\n\n`,
    );
    const samples = {};
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates every round, so a slow drift of the machine favours no route.
      const order = ROUTES.map((_, i) => ROUTES[(i + round) % ROUTES.length]);
      for (const scenario of measured) {
        for (const route of order) {
          const request = scenario[route];
          const latency = await sequentialLatency(request.origin, request);
          const { rps, cpu } = await throughput(request.origin, request, DURATION, watched);
          const key = `${scenario.name}/${route}`;
          (samples[key] ??= []).push({ rps, ...latency, cpu });
        }
      }
    }

    process.stdout.write('operation    route          req/s       p50       p99   proxy CPU us/req   emulator CPU us/req\n');
    const verdicts = [];
    for (const scenario of measured) {
      for (const route of ROUTES) {
        const runs = samples[`${scenario.name}/${route}`];
        const proxyCpu = route === 'direct' ? undefined : median(runs.map((r) => r.cpu[route]));
        process.stdout.write(
          `${scenario.name.padEnd(12)} ${route.padEnd(10)} ${fmt(median(runs.map((r) => r.rps)), 0)} ${fmt(median(runs.map((r) => r.p50)))} ` +
            `${fmt(median(runs.map((r) => r.p99)))} ${fmt(proxyCpu, 0).padStart(18)} ${fmt(median(runs.map((r) => r.cpu.emulator)), 0).padStart(21)}\n`,
        );
      }
      const direct = samples[`${scenario.name}/direct`];
      const share = (route) => samples[`${scenario.name}/${route}`].map((run, i) => run.rps / direct[i].rps);
      const added = (route) => median(samples[`${scenario.name}/${route}`].map((run, i) => run.p50 - direct[i].p50));
      const ratios = share('gateway');
      const ratio = median(ratios);
      verdicts.push(
        `${scenario.name}: added p50 ${added('gateway').toFixed(3)} ms (target <= 1 ms: ${added('gateway') <= 1 ? 'met' : 'MISSED'}; bare proxy ${added('bare-proxy').toFixed(3)} ms), ` +
          `throughput ${ratio.toFixed(2)}x direct (rounds: ${ratios.map((r) => r.toFixed(2)).join(' ')}; target >= 0.5x: ${ratio >= 0.5 ? 'met' : 'MISSED'}; ` +
          `bare proxy ${median(share('bare-proxy')).toFixed(2)}x)`,
      );
    }
    process.stdout.write(`\n${verdicts.join('\n')}\n`);
  } finally {
    await Promise.all([stop(gateway.child), stop(emulator.child), stop(bareProxy.child)]);
  }
}

main().catch((error) => {
  process.stderr.write(`bench/gateway: ${error.message}\n`);
  process.exit(1);
});
