'use strict';
// bench/dialects/same-family.js: issue 28's same-family target measured in-process, which a busy shared machine
// disturbs less than run.js's loaded HTTP runs. Anthropic Messages to an Anthropic upstream against Chat
// Completions to the same upstream, plain and streamed, each variant in a fresh process (same-family-process.js) every
// round, rounds interleaved with rotating order; medians of the per-round ratios of Messages to Chat. BUILDS
// (comma-separated dist directories, default this checkout's) compares builds within one run: e.g. the commit
// before a change, built elsewhere, against this one.
// Usage: npm run build && node bench/dialects/same-family.js   (env: ROUNDS=5 REQUESTS=2000 WARMUP_REQUESTS=1000 BUILDS=...)
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop } = require('../gateway/harness');

const ROUNDS = Number(process.env.ROUNDS || 5);
const API_KEY = 'sk-ant-bench-upstream';
const BUILDS = (process.env.BUILDS || path.join(ROOT, 'dist')).split(',');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const emulator = await start([path.join(ROOT, 'bench', 'gateway', 'anthropic-emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-same-family-'));
  const file = path.join(configDir, 'tollgate.yaml');
  fs.writeFileSync(
    file,
    [
      'version: 1',
      'logs: { requests: false }',
      'providers:',
      `  anthropic: { url: "${emulator.match}", api_key: "${API_KEY}", chat_model: claude-bench }`,
      'ai: { model_aliases: { bench-claude: [anthropic/claude-bench] } }',
      '',
    ].join('\n'),
  );
  const variants = BUILDS.flatMap((dist, build) =>
    ['0', '1'].flatMap((stream) => ['chat', 'messages'].map((surface) => ({ name: `b${build} ${stream === '1' ? 'stream' : 'plain'} ${surface}`, dist, stream, surface }))),
  );
  const runs = Object.fromEntries(variants.map(({ name }) => [name, []]));
  process.stdout.write(`bench/dialects/same-family: Node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${ROUNDS} rounds\n`);
  BUILDS.forEach((dist, build) => process.stdout.write(`  b${build}: ${dist}\n`));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of variants.map((_, i) => variants[(i + round) % variants.length])) {
        const env = { ...process.env, TOLLGATE_CONFIG: file, API_TOKEN: 'bench-api-token', DIST: variant.dist, STREAM: variant.stream, SURFACE: variant.surface };
        const output = execFileSync(process.execPath, [path.join(__dirname, 'same-family-process.js')], { cwd: configDir, env, encoding: 'utf8' });
        const [processCpu, mainCpu] = output.trim().split('\n').pop().split(' ').map(Number);
        runs[variant.name].push({ processCpu, mainCpu });
      }
      process.stdout.write(`round ${round + 1}, load average ${os.loadavg()[0].toFixed(1)}: ${variants.map(({ name }) => `${name} ${runs[name][round].processCpu.toFixed(0)}`).join(', ')} us/req\n`);
    }
    process.stdout.write('\nbuild mode   chat us/req  messages us/req  messages vs chat, process CPU (per round)   main thread\n');
    for (const [build] of BUILDS.entries()) {
      for (const mode of ['plain', 'stream']) {
        const chat = runs[`b${build} ${mode} chat`];
        const messages = runs[`b${build} ${mode} messages`];
        const ratios = (field) => messages.map((run, i) => run[field] / chat[i][field]);
        const percent = (values) => `${(100 * (median(values) - 1)).toFixed(1)}%`;
        process.stdout.write(
          `b${build}    ${mode.padEnd(6)} ${median(chat.map((run) => run.processCpu)).toFixed(1).padStart(9)} ${median(messages.map((run) => run.processCpu)).toFixed(1).padStart(14)}   ` +
            `${percent(ratios('processCpu')).padStart(6)} (${ratios('processCpu').map((r) => (100 * (r - 1)).toFixed(1)).join(' ')})   ${percent(ratios('mainCpu'))}\n`,
        );
      }
    }
  } finally {
    await stop(emulator.child);
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench/dialects/same-family: ${error.message}\n`);
  process.exit(1);
});
