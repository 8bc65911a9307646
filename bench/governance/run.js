'use strict';
// bench/governance: what each part of governance costs the chat path, in CPU time per request. One Tollgate
// process per variant, each on the OpenAI emulator: none (shared API token, ledger off), ledger (shared token,
// memory ledger), key (an API key, ledger off, no budget), key+budget (an API key and a key budget reserved and
// settled on every call) and governed (all three, bench:compare's `governed` target). Interleaved rounds whose
// order rotates, each variant in a fresh process every round; each variant's CPU per request is divided by the
// plain one of the same round, and the medians of those ratios are printed.
// Usage: npm run build && node bench/governance/run.js
//   (env: CONNECTIONS=10 DURATION=5 ROUNDS=5 WARMUP=2 ROUTE=chat|stream VARIANTS=ledger,governed GOVERNANCE_STORE=memory|redis
//    REDIS_URL=redis://127.0.0.1:6379)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop, throughput } = require('../gateway/harness');
const { NAMES: ALL, STORE, VARIANTS, configYaml, createKey } = require('./variants');

const CONNECTIONS = Number(process.env.CONNECTIONS || 10);
const DURATION = Number(process.env.DURATION || 5);
const ROUNDS = Number(process.env.ROUNDS || 5);
const WARMUP = Number(process.env.WARMUP || 2);
const STREAM = process.env.ROUTE === 'stream';
/** VARIANTS=none,governed measures only those (none, the baseline, always). */
const NAMES = process.env.VARIANTS ? ['none', ...process.env.VARIANTS.split(',').filter((name) => name !== 'none')] : ALL;
const unknown = NAMES.filter((name) => !ALL.includes(name));
if (unknown.length) throw new Error(`unknown variant ${unknown.join(', ')} (${ALL.join(', ')})`);

const API_KEY = 'sk-bench-upstream';
const API_TOKEN = 'bench-api-token';
const MODEL = 'gpt-test';

const median = (values) => {
  const sorted = values.filter((v) => v !== undefined).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/** req/s and the server's CPU microseconds per request over `duration` seconds of load. */
async function load(target, duration) {
  const request = {
    origin: target.origin,
    path: '/openai/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.bearer}` },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello' }], ...(STREAM ? { stream: true } : {}) }),
  };
  const { rps, cpu } = await throughput(request, { duration, connections: CONNECTIONS, watched: { server: target.pid } });
  return { rps, cpu: cpu.server };
}

async function main() {
  const emulator = await start([path.join(ROOT, 'bench', 'gateway', 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const processes = [emulator];
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-governance-'));
  try {
    const startVariant = async (name) => {
      const server = await start(
        [path.join(ROOT, 'dist', 'src', 'main.js')],
        { PORT: '0', API_TOKEN, TOLLGATE_CONFIG: files[name], OPENAI_API_KEY: API_KEY, OPENAI_URL: emulator.match, OPENAI_CHAT_MODEL: MODEL, TOLLGATE_DEFAULT_PROVIDER: 'openai' },
        /listening on (http:\/\/[^\s"]+)/,
      );
      processes.push(server);
      return { server, origin: server.match, pid: server.child.pid, bearer: VARIANTS[name].key ? await createKey(server.match) : API_TOKEN };
    };
    const files = {};
    for (const name of NAMES) {
      files[name] = path.join(configDir, `${name.replace('+', '-')}.yaml`);
      fs.writeFileSync(files[name], configYaml(VARIANTS[name]));
    }
    process.stdout.write(
      `bench/governance: /openai/v1/chat/completions${STREAM ? ' (stream)' : ''}, ${STORE} stores; Node ${process.version}, ${os.cpus().length} CPUs; ` +
        `${CONNECTIONS} connections x ${DURATION} s after ${WARMUP} s of warm-up, ${ROUNDS} interleaved rounds, fresh processes every round\n\n`,
    );
    const runs = Object.fromEntries(NAMES.map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Fresh processes each round: one process can run a few per cent slower than another for its whole life.
      const order = NAMES.map((_, i) => NAMES[(i + round) % NAMES.length]);
      for (const name of order) {
        const target = await startVariant(name);
        try {
          await load(target, WARMUP);
          runs[name].push(await load(target, DURATION));
        } finally {
          await stop(target.server.child);
          processes.splice(processes.indexOf(target.server), 1);
        }
      }
      process.stdout.write(`round ${round + 1}: ${NAMES.map((name) => `${name} ${runs[name][round].cpu.toFixed(0)}`).join(', ')} us/req\n`);
    }
    process.stdout.write('\nvariant        req/s  CPU us/req  vs none (median of per-round ratios)\n');
    for (const name of NAMES) {
      const ratios = runs[name].map((run, i) => run.cpu / runs.none[i].cpu);
      process.stdout.write(
        `${name.padEnd(12)} ${median(runs[name].map((r) => r.rps)).toFixed(0).padStart(7)} ${median(runs[name].map((r) => r.cpu)).toFixed(0).padStart(11)}  ` +
          `${name === 'none' ? '' : `${(100 * (median(ratios) - 1)).toFixed(1).padStart(6)}% (rounds ${ratios.map((r) => `${(100 * (r - 1)).toFixed(1)}%`).join(' ')})`}\n`,
      );
    }
  } finally {
    await Promise.all(processes.map((p) => stop(p.child)));
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench/governance: ${error.message}\n`);
  process.exit(1);
});
