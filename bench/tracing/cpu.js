'use strict';
// bench/tracing/cpu.js: the chat path's CPU per request with tracing off and on, in-process (inject-cpu.js:
// sequential requests, no load generator competing for the cores), which a busy shared machine disturbs less
// than run.js's loaded HTTP runs. Prints the whole process's CPU and the event-loop thread's alone (V8's
// compiler and GC helper threads, busy in short runs, left out). Variants as run.js's (off, on, on-unsampled), each in a fresh process every
// round, rounds interleaved with rotating order; medians of the per-round ratios to off.
// BASELINE_DIST=<another build's dist/> adds that build's off and on (base:off, base:on; base:on is divided by
// base:off) to the same rounds, so a change's before and after share one run's machine state; VARIANTS=off,on,...
// picks the variants.
// Usage: npm run build && node bench/tracing/cpu.js
//   (env: ROUNDS=5 REQUESTS=3000 WARMUP_REQUESTS=1500 ROUTE=chat|stream BASELINE_DIST= VARIANTS=)
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop } = require('../gateway/harness');

const ROUNDS = Number(process.env.ROUNDS || 5);
const BASELINE_DIST = process.env.BASELINE_DIST;
const API_KEY = 'sk-bench-upstream';
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const emulator = await start([path.join(ROOT, 'bench', 'gateway', 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const sink = await start([path.join(__dirname, 'otlp-sink.js')], {}, /ready (\S+)/);
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-tracing-'));
  try {
    const otel = (extra) => ['version: 1', 'observability:', '  otel:', `    endpoint: ${sink.match}`, ...extra.map((line) => `    ${line}`), ''].join('\n');
    const texts = { off: 'version: 1\n', on: otel([]), 'on-unsampled': otel(['sampling_ratio: 0']) };
    if (BASELINE_DIST) Object.assign(texts, { 'base:off': texts.off, 'base:on': texts.on });
    const names = process.env.VARIANTS ? process.env.VARIANTS.split(',') : Object.keys(texts);
    if (!names.includes('off') || names.some((name) => !(name in texts))) throw new Error(`VARIANTS: off and any of ${Object.keys(texts).join(', ')}`);
    // Each variant's figure is divided by the off of its own build in the same round.
    const baselineOf = (name) => (name.startsWith('base:') && names.includes('base:off') ? 'base:off' : 'off');
    const runs = Object.fromEntries(names.map((name) => [name, []]));
    process.stdout.write(
      `bench/tracing/cpu: /openai/v1/chat/completions${process.env.ROUTE === 'stream' ? ' (stream)' : ''} through inject(), Node ${process.version}, ` +
        `${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}; ${ROUNDS} rounds\n`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of names.map((_, i) => names[(i + round) % names.length])) {
        const file = path.join(configDir, `${name}.yaml`);
        fs.writeFileSync(file, texts[name]);
        const env = { ...process.env, ...(name.startsWith('base:') ? { DIST: path.resolve(BASELINE_DIST) } : {}), TOLLGATE_CONFIG: file, API_TOKEN: 'bench-api-token', OPENAI_API_KEY: API_KEY, OPENAI_URL: emulator.match, OPENAI_CHAT_MODEL: 'gpt-test', TOLLGATE_DEFAULT_PROVIDER: 'openai' };
        const output = execFileSync(process.execPath, [path.join(__dirname, 'inject-cpu.js')], { cwd: configDir, env, encoding: 'utf8' });
        const [processCpu, mainCpu] = output.trim().split('\n').pop().split(' ').map(Number);
        runs[name].push({ processCpu, mainCpu });
      }
      process.stdout.write(`round ${round + 1}: ${names.map((name) => `${name} ${runs[name][round].processCpu.toFixed(1)} (main ${runs[name][round].mainCpu.toFixed(1)})`).join(', ')} us/req\n`);
    }
    process.stdout.write('\nvariant        process CPU us/req  vs off   main thread us/req  vs off (medians of per-round ratios)\n');
    for (const name of names) {
      const column = (field) => {
        const base = baselineOf(name);
        const ratios = runs[name].map((run, i) => run[field] / runs[base][i][field]);
        const share = name === base ? '' : `${(100 * (median(ratios) - 1)).toFixed(1)}% (${ratios.map((r) => `${(100 * (r - 1)).toFixed(1)}`).join(' ')})`;
        return `${median(runs[name].map((run) => run[field])).toFixed(1).padStart(10)}  ${share.padEnd(26)}`;
      };
      process.stdout.write(`${name.padEnd(14)} ${column('processCpu')} ${column('mainCpu')}\n`);
    }
  } finally {
    await Promise.all([stop(emulator.child), stop(sink.child)]);
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench/tracing/cpu: ${error.message}\n`);
  process.exit(1);
});
