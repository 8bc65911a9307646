'use strict';
// bench/auth: one route served four ways in one run, loaded with autocannon on loopback in interleaved
// rounds; prints req/s, p99 and server CPU per request per variant and its ratio to the unguarded route,
// then an HS256 verify micro-benchmark. The ratio is the median of each round's ratio to the unguarded run
// just before it, so a shared machine's speed drifting over the run moves both sides of each ratio alike;
// every round starts fresh server processes.
// Usage: npm run bench:auth  (env: ROUNDS=7 DURATION=3 CONNECTIONS=10; LIMITS=1 adds the
// JWT + tenant checks with a per-tenant rate limit that never trips, counters in memory and in Redis)
const { spawn, spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const { BENCH_REQUEST } = require('./bench-fixtures');
const { measureVerify } = require('./verify-microbench');
const { cpuMicros } = require('../gateway/harness');

const ROUNDS = Number(process.env.ROUNDS || 7);
const DURATION = Number(process.env.DURATION || 3);
const CONNECTIONS = Number(process.env.CONNECTIONS || 10);
const BASE_PORT = Number(process.env.BENCH_PORT || 38100);

const VARIANTS = [
  { name: 'unguarded', target: null },
  { name: 'jwt+tenant', target: 0.8 },
  { name: 'jwt+tenant+rbac(memory)', target: 0.75 },
  { name: 'jwt+tenant+rbac(redis)', target: 0.6 },
  ...(process.env.LIMITS === '1'
    ? [
        { name: 'jwt+tenant+limit(memory)', target: null },
        { name: 'jwt+tenant+limit(redis)', target: null },
      ]
    : []),
];

// With two or more cores and util-linux's taskset, the servers run on the last core and the load generator on
// the others, so the scheduler cannot give one variant a core to itself and the next a shared one.
const PINNED = os.cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
if (PINNED) spawnSync('taskset', ['-pc', `0-${os.cpus().length - 2}`, String(process.pid)]);

function startServer(variant, port) {
  return new Promise((resolve, reject) => {
    const entry = [path.join(__dirname, 'bench-server.js'), variant, String(port)];
    const [command, args] = PINNED
      ? ['taskset', ['-c', String(os.cpus().length - 1), process.execPath, ...entry]]
      : [process.execPath, entry];
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    child.once('exit', (code) => reject(new Error(`${variant} server exited with ${code}`)));
    child.stdout.on('data', (chunk) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
  });
}

function load(port, duration) {
  return autocannon({
    url: `http://127.0.0.1:${port}${BENCH_REQUEST.path}`,
    headers: BENCH_REQUEST.headers,
    connections: CONNECTIONS,
    duration,
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/** Stops one server and resolves once it has exited. */
function stopServer(child) {
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

async function main() {
  let servers = [];
  try {
    const samples = VARIANTS.map(() => ({ rps: [], ratio: [], cpu: [], p99: [], non2xx: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      // Fresh processes every round: one process can run a few per cent slower than another for its whole
      // life (code placement, JIT decisions), which the median over rounds then averages out.
      for (const [index, variant] of VARIANTS.entries()) servers.push(await startServer(variant.name, BASE_PORT + index));
      for (const [index] of VARIANTS.entries()) await load(BASE_PORT + index, 2); // warm-up: JIT, permission cache
      for (const [index, variant] of VARIANTS.entries()) {
        const cpuBefore = cpuMicros(servers[index].pid);
        const result = await load(BASE_PORT + index, DURATION);
        const cpuAfter = cpuMicros(servers[index].pid);
        if (cpuBefore !== undefined && cpuAfter !== undefined) samples[index].cpu.push((cpuAfter - cpuBefore) / result.requests.total);
        samples[index].rps.push(result.requests.average);
        samples[index].ratio.push(result.requests.average / samples[0].rps[round]);
        samples[index].p99.push(result.latency.p99);
        samples[index].non2xx += result.non2xx + result.errors;
        process.stderr.write(`round ${round + 1} ${variant.name}: ${Math.round(result.requests.average)} req/s\n`);
      }
      await Promise.all(servers.map(stopServer));
      servers = [];
    }
    console.log(
      `\nbench/auth — ${ROUNDS} rounds x ${DURATION}s, ${CONNECTIONS} connections, node ${process.version}` +
        (PINNED ? `, servers on CPU ${os.cpus().length - 1}, load generator on the others` : ''),
    );
    console.log('variant                      req/s   p99 ms   ratio   target  CPU µs/req  non-2xx');
    let failed = false;
    for (const [index, variant] of VARIANTS.entries()) {
      const rps = median(samples[index].rps);
      const ratio = median(samples[index].ratio);
      const cpu = samples[index].cpu.length ? median(samples[index].cpu).toFixed(1) : '-';
      const meets = variant.target === null || ratio >= variant.target;
      if (!meets || samples[index].non2xx > 0) failed = true;
      console.log(
        `${variant.name.padEnd(26)} ${String(Math.round(rps)).padStart(7)} ${String(median(samples[index].p99)).padStart(8)}` +
          `   ${ratio.toFixed(2)}x  ${variant.target === null ? '   -   ' : `>=${variant.target.toFixed(2)}x`}` +
          `  ${cpu.padStart(10)}  ${samples[index].non2xx}${meets ? '' : '  BELOW TARGET'}`,
      );
    }
    console.log('');
    for (const line of measureVerify()) console.log(line);
    process.exitCode = failed ? 1 : 0;
  } finally {
    for (const server of servers) server.kill('SIGTERM');
  }
}

main().catch((error) => {
  console.error(`bench/auth failed: ${error.message}`);
  process.exit(1);
});
