'use strict';
// bench/tracing: what OpenTelemetry tracing costs the chat path, in CPU time per request. Three Tollgate
// processes on the OpenAI emulator: off (no observability section: the SDK is not loaded), on (every request
// sampled, spans and GenAI metrics exported over OTLP/HTTP to a local sink that reads and drops them), and
// on-unsampled (sampling_ratio 0: spans are created but not recorded or exported). Interleaved rounds whose
// order rotates, fresh processes every round; each variant's CPU per request is divided by the off one of the
// same round, and the medians of those ratios are printed. The exporters' CPU counts: they run in the server.
// Usage: npm run build && node bench/tracing/run.js
//   (env: CONNECTIONS=10 DURATION=5 ROUNDS=5 WARMUP=2 ROUTE=chat|stream)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop, throughput } = require('../gateway/harness');

const CONNECTIONS = Number(process.env.CONNECTIONS || 10);
const DURATION = Number(process.env.DURATION || 5);
const ROUNDS = Number(process.env.ROUNDS || 5);
const WARMUP = Number(process.env.WARMUP || 2);
const STREAM = process.env.ROUTE === 'stream';

const API_KEY = 'sk-bench-upstream';
const API_TOKEN = 'bench-api-token';
const MODEL = 'gpt-test';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function configs(sink) {
  const otel = (extra) => ['version: 1', 'observability:', '  otel:', `    endpoint: ${sink}`, ...extra.map((line) => `    ${line}`), ''].join('\n');
  return { off: 'version: 1\n', on: otel([]), 'on-unsampled': otel(['sampling_ratio: 0']) };
}

async function load(target, duration) {
  const request = {
    origin: target.origin,
    path: '/openai/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello' }], ...(STREAM ? { stream: true } : {}) }),
  };
  const { rps, cpu } = await throughput(request, { duration, connections: CONNECTIONS, watched: { server: target.pid } });
  return { rps, cpu: cpu.server };
}

async function main() {
  const emulator = await start([path.join(ROOT, 'bench', 'gateway', 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const sink = await start([path.join(__dirname, 'otlp-sink.js')], {}, /ready (\S+)/);
  const processes = [emulator, sink];
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-tracing-'));
  try {
    const texts = configs(sink.match);
    const names = Object.keys(texts);
    const files = {};
    for (const name of names) {
      files[name] = path.join(configDir, `${name}.yaml`);
      fs.writeFileSync(files[name], texts[name]);
    }
    const startVariant = async (name) => {
      const server = await start(
        [path.join(ROOT, 'dist', 'src', 'main.js')],
        { PORT: '0', API_TOKEN, TOLLGATE_CONFIG: files[name], OPENAI_API_KEY: API_KEY, OPENAI_URL: emulator.match, OPENAI_CHAT_MODEL: MODEL, TOLLGATE_DEFAULT_PROVIDER: 'openai' },
        /listening on (http:\/\/[^\s"]+)/,
      );
      processes.push(server);
      return { server, origin: server.match, pid: server.child.pid };
    };
    process.stdout.write(
      `bench/tracing: /openai/v1/chat/completions${STREAM ? ' (stream)' : ''}; Node ${process.version}, ${os.cpus().length} CPUs; ` +
        `${CONNECTIONS} connections x ${DURATION} s after ${WARMUP} s of warm-up, ${ROUNDS} interleaved rounds, fresh processes every round\n\n`,
    );
    const runs = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = names.map((_, i) => names[(i + round) % names.length]);
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
      process.stdout.write(`round ${round + 1}: ${names.map((name) => `${name} ${runs[name][round].cpu.toFixed(0)}`).join(', ')} us/req\n`);
    }
    process.stdout.write('\nvariant          req/s  CPU us/req  vs off (median of per-round ratios)\n');
    for (const name of names) {
      const ratios = runs[name].map((run, i) => run.cpu / runs.off[i].cpu);
      process.stdout.write(
        `${name.padEnd(14)} ${median(runs[name].map((r) => r.rps)).toFixed(0).padStart(7)} ${median(runs[name].map((r) => r.cpu)).toFixed(0).padStart(11)}  ` +
          `${name === 'off' ? '' : `${(100 * (median(ratios) - 1)).toFixed(1).padStart(6)}% (rounds ${ratios.map((r) => `${(100 * (r - 1)).toFixed(1)}%`).join(' ')})`}\n`,
      );
    }
  } finally {
    await Promise.all(processes.map((p) => stop(p.child)));
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench/tracing: ${error.message}\n`);
  process.exit(1);
});
