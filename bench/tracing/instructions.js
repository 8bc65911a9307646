'use strict';
// bench/tracing/instructions.js: the chat path's instructions per request with tracing off and on, counted by
// valgrind's callgrind (bench/README.md: work driven by the clock still varies between runs). Each variant runs
// inject-cpu.js under `valgrind --tool=callgrind --instr-atstart=no node --no-opt`, which switches the counting
// on for its REQUESTS measured requests only (callgrind_control), so start-up and warm-up cost nothing but the
// time valgrind takes to run them; the span exports of the measured window count.
// BASELINE_DIST=<another build's dist/> adds that build's off and on (base:off, base:on).
// Usage: npm run build && node bench/tracing/instructions.js
//   (env: REQUESTS=1000 WARMUP_REQUESTS=200 ROUTE=chat|stream BASELINE_DIST= VARIANTS=off,on)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop } = require('../gateway/harness');
const { injectInstructions } = require('../in-process-cpu');

const REQUESTS = Number(process.env.REQUESTS || 1000);
const BASELINE_DIST = process.env.BASELINE_DIST;
const API_KEY = 'sk-bench-upstream';

async function main() {
  const emulator = await start([path.join(ROOT, 'bench', 'gateway', 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const sink = await start([path.join(__dirname, 'otlp-sink.js')], {}, /ready (\S+)/);
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-instructions-'));
  try {
    // What runs by the clock rather than per request is kept out of the window, since valgrind stretches the
    // wall time ~50-fold: metrics exported hourly, spans only when a batch of 512 is full (OTEL_BSP_SCHEDULE_DELAY
    // below), and no V8 memory reducer (its collections are timed).
    const texts = { off: 'version: 1\n', on: ['version: 1', 'observability:', '  otel:', `    endpoint: ${sink.match}`, '    metrics_interval: 3600', ''].join('\n') };
    const dists = { off: undefined, on: undefined, 'base:off': BASELINE_DIST, 'base:on': BASELINE_DIST };
    const names = (process.env.VARIANTS || (BASELINE_DIST ? 'off,on,base:off,base:on' : 'off,on')).split(',');
    process.stdout.write(
      `bench/tracing/instructions: /openai/v1/chat/completions${process.env.ROUTE === 'stream' ? ' (stream)' : ''} through inject() under callgrind, ` +
        `Node ${process.version}, ${REQUESTS} requests, load average ${os.loadavg()[0].toFixed(1)}\n`,
    );
    const perRequest = {};
    for (const name of names) {
      const file = path.join(configDir, `${name.replace(':', '-')}.yaml`);
      fs.writeFileSync(file, texts[name.replace('base:', '')]);
      const env = {
        ...process.env,
        ...(dists[name] ? { DIST: path.resolve(dists[name]) } : {}),
        WARMUP_REQUESTS: process.env.WARMUP_REQUESTS || '200',
        REQUESTS: String(REQUESTS),
        CALLGRIND: '1',
        OTEL_BSP_SCHEDULE_DELAY: '3600000',
        TOLLGATE_CONFIG: file,
        API_TOKEN: 'bench-api-token',
        OPENAI_API_KEY: API_KEY,
        OPENAI_URL: emulator.match,
        OPENAI_CHAT_MODEL: 'gpt-test',
        TOLLGATE_DEFAULT_PROVIDER: 'openai',
      };
      const out = path.join(configDir, `callgrind.${name.replace(':', '-')}`);
      perRequest[name] = injectInstructions(env, configDir, out) / REQUESTS;
      process.stdout.write(`${name.padEnd(10)} ${Math.round(perRequest[name] / 1000)}k instructions/req (load average ${os.loadavg()[0].toFixed(1)})\n`);
    }
    for (const name of names) {
      const base = name.startsWith('base:') ? 'base:off' : 'off';
      if (name !== base && perRequest[base] !== undefined) process.stdout.write(`${name} vs ${base}: ${(100 * (perRequest[name] / perRequest[base] - 1)).toFixed(1)}%\n`);
    }
  } finally {
    await Promise.all([stop(emulator.child), stop(sink.child)]);
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench/tracing/instructions: ${error.message}\n`);
  process.exit(1);
});
