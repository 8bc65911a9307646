'use strict';
// bench/memory/young-generation: what a smaller V8 young generation costs the chat path and saves in RSS.
// One Tollgate per semi-space size (Node's --max-semi-space-size, MiB; Node 20's default is 16) on the OpenAI
// emulator, /openai/v1/chat/completions loaded with autocannon, plain and streamed; fresh processes every
// round, the order rotating, each variant's CPU per request divided by the default's of the same round.
// Usage: npm run build && node bench/memory/young-generation.js
//   (env: SIZES=16,8,4,2 CONNECTIONS=20 DURATION=5 ROUNDS=3 WARMUP=2)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, openAiScenarios, start, stop, throughput } = require('../gateway/harness');

const SIZES = (process.env.SIZES || '16,8,4,2').split(',').map(Number);
const CONNECTIONS = Number(process.env.CONNECTIONS || 20);
const DURATION = Number(process.env.DURATION || 5);
const ROUNDS = Number(process.env.ROUNDS || 3);
const WARMUP = Number(process.env.WARMUP || 2);
const API_KEY = 'sk-bench-upstream';
const API_TOKEN = 'bench-api-token';

function rssMiB(pid) {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line.split(/\s+/)[1]) / 1024;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function run() {
  const emulator = await start([path.join(ROOT, 'bench', 'gateway', 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const env = { PORT: '0', API_TOKEN, OPENAI_API_KEY: API_KEY, OPENAI_URL: emulator.match, OPENAI_CHAT_MODEL: 'gpt-test', TOLLGATE_DEFAULT_PROVIDER: 'openai' };
  const samples = {};
  try {
    process.stdout.write(
      `bench/memory/young-generation: semi-space ${SIZES.join(', ')} MiB; Node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ` +
        `${CONNECTIONS} connections x ${DURATION} s, ${ROUNDS} rounds\n`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      const order = SIZES.map((_, i) => SIZES[(i + round) % SIZES.length]);
      for (const size of order) {
        const gateway = await start([`--max-semi-space-size=${size}`, path.join(ROOT, 'dist', 'src', 'main.js')], env, /listening on (http:\/\/[^\s"]+)/);
        try {
          for (const scenario of openAiScenarios(gateway.match).filter((s) => s.name.startsWith('openai-chat'))) {
            await throughput(scenario.gateway, { duration: WARMUP, connections: CONNECTIONS });
            const load = await throughput(scenario.gateway, { duration: DURATION, connections: CONNECTIONS, watched: { gateway: gateway.child.pid } });
            (samples[`${scenario.name}/${size}`] ??= []).push({ cpu: load.cpu.gateway, rps: load.rps, rss: rssMiB(gateway.child.pid) });
          }
        } finally {
          await stop(gateway.child);
        }
      }
    }
  } finally {
    await stop(emulator.child);
  }
  process.stdout.write(`load average after: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n\nscenario            semi MiB  req/s  CPU us/req  x default (rounds)            RSS after load MiB\n`);
  for (const scenario of ['openai-chat', 'openai-chat-stream']) {
    const base = samples[`${scenario}/16`] ?? samples[`${scenario}/${SIZES[0]}`];
    for (const size of SIZES) {
      const runs = samples[`${scenario}/${size}`];
      const ratios = runs.map((r, i) => r.cpu / base[i].cpu);
      process.stdout.write(
        `${scenario.padEnd(20)}${String(size).padStart(8)} ${median(runs.map((r) => r.rps)).toFixed(0).padStart(6)} ${median(runs.map((r) => r.cpu)).toFixed(0).padStart(11)}  ` +
          `${median(ratios).toFixed(3)} (${ratios.map((r) => r.toFixed(3)).join(' ')})`.padEnd(30) +
          `${median(runs.map((r) => r.rss)).toFixed(1).padStart(8)}\n`,
      );
    }
  }
}

run().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
