'use strict';
// bench/gateway: POST /v1/generate and /v1/embeddings through the Tollgate server to the OpenAI emulator,
// against the same calls sent to the emulator directly, in one run. Prints req/s (autocannon, concurrent),
// p50/p99 latency (sequential, one keep-alive connection, sub-millisecond) and the added latency.
// Targets (issue 3): added p50 <= 1 ms, gateway throughput >= 0.5x direct.
// Usage: npm run build && node bench/gateway/run.js   (env: DURATION=5 CONNECTIONS=10 SAMPLES=2000 WARMUP=2)
const { spawn } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const { Pool } = require('undici');

const DURATION = Number(process.env.DURATION || 5);
const CONNECTIONS = Number(process.env.CONNECTIONS || 10);
const SAMPLES = Number(process.env.SAMPLES || 2000);
const WARMUP = Number(process.env.WARMUP || 2);
const ROOT = path.resolve(__dirname, '..', '..');
const API_KEY = 'sk-bench-upstream';
const API_TOKEN = 'bench-api-token';

/** Spawns a child and resolves with it and the first regex match of its output. */
function start(args, env, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: os.tmpdir(), env: { PATH: process.env.PATH, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const onData = (chunk) => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) resolve({ child, match: match[1] });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}:\n${output}`)));
  });
}

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

async function throughput(origin, request, duration = DURATION) {
  const result = await autocannon({ url: origin + request.path, method: 'POST', headers: request.headers, body: request.body, connections: CONNECTIONS, duration });
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0) throw new Error(`${origin}${request.path}: ${failed} failed requests`);
  return result.requests.average;
}

function scenarios(emulatorUrl, gatewayUrl) {
  const upstream = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  const gateway = { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` };
  const emulator = new URL(emulatorUrl);
  return [
    {
      name: 'generate',
      direct: { origin: emulator.origin, path: `${emulator.pathname}/chat/completions`, headers: upstream, body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'system', content: 'You are a helpful assistant. Answer accurately and concisely.' }, { role: 'user', content: 'Say hello' }] }) },
      gateway: { origin: gatewayUrl, path: '/v1/generate', headers: gateway, body: JSON.stringify({ prompt: 'Say hello' }) },
    },
    {
      name: 'embeddings',
      // Base64 is what the official SDK (and Tollgate's adapter) asks for.
      direct: { origin: emulator.origin, path: `${emulator.pathname}/embeddings`, headers: upstream, body: JSON.stringify({ model: 'embed-test', input: 'Say hello', encoding_format: 'base64' }) },
      gateway: { origin: gatewayUrl, path: '/v1/embeddings', headers: gateway, body: JSON.stringify({ input: 'Say hello' }) },
    },
  ];
}

const fmt = (value, digits = 2) => value.toFixed(digits).padStart(9);

async function main() {
  const children = [];
  try {
    const emulator = await start([path.join(__dirname, 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
    children.push(emulator.child);
    const gateway = await start(
      [path.join(ROOT, 'dist', 'src', 'main.js')],
      { PORT: '0', API_TOKEN, OPENAI_API_KEY: API_KEY, OPENAI_URL: emulator.match, OPENAI_CHAT_MODEL: 'gpt-test', OPENAI_EMBEDDING_MODEL: 'embed-test' },
      /listening on (http:\/\/\S+)/,
    );
    children.push(gateway.child);

    // Warm-up: JIT, connection pools and lazy module state, so the first scenario measured is not penalised.
    for (const scenario of scenarios(emulator.match, gateway.match)) {
      for (const route of ['direct', 'gateway']) await throughput(scenario[route].origin, scenario[route], WARMUP);
    }
    process.stdout.write(`bench/gateway: ${CONNECTIONS} connections x ${DURATION} s for req/s; ${SAMPLES} sequential requests for p50/p99 (ms)\n\n`);
    process.stdout.write('operation    route      req/s        p50       p99\n');
    const verdicts = [];
    for (const scenario of scenarios(emulator.match, gateway.match)) {
      const rows = {};
      for (const route of ['direct', 'gateway']) {
        const request = scenario[route];
        const latency = await sequentialLatency(request.origin, request);
        const rps = await throughput(request.origin, request);
        rows[route] = { rps, ...latency };
        process.stdout.write(`${scenario.name.padEnd(12)} ${route.padEnd(8)} ${fmt(rps, 0)} ${fmt(latency.p50)} ${fmt(latency.p99)}\n`);
      }
      const added = rows.gateway.p50 - rows.direct.p50;
      const ratio = rows.gateway.rps / rows.direct.rps;
      verdicts.push(
        `${scenario.name}: added p50 ${added.toFixed(3)} ms (target <= 1 ms: ${added <= 1 ? 'met' : 'MISSED'}), ` +
          `throughput ${ratio.toFixed(2)}x direct (target >= 0.5x: ${ratio >= 0.5 ? 'met' : 'MISSED'})`,
      );
    }
    process.stdout.write(`\n${verdicts.join('\n')}\n`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
}

main().catch((error) => {
  process.stderr.write(`bench/gateway: ${error.message}\n`);
  process.exit(1);
});
