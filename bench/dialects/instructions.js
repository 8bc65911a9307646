'use strict';
// bench/dialects/instructions.js: inject-cpu.js's ratios counted in instructions (valgrind's callgrind), which a
// loaded machine does not move: the kernel's tick-sampled CPU time moved one variant's per-round ratio from -60 %
// to +136 % at load 13, where an instruction count is the same run after run. One process runs every scenario
// (warmed up WARMUP_REQUESTS each, optimised as in a real server: no --no-opt), then counts each scenario's REQUESTS
// alone (one callgrind dump per scenario); prints instructions per request outside V8's optimising compiler and each against chat to the same upstream
// in the same mode. DIST=<another build's dist/> counts that build.
// Usage: npm run build && node bench/dialects/instructions.js   (env: REQUESTS=250 WARMUP_REQUESTS=60 DIST=)
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REQUESTS = Number(process.env.REQUESTS || 250);

/**
 * A dump's instructions outside V8's optimising compiler. Under valgrind the compiler is still at work after any
 * warm-up the time allows (a third to a half of a window's instructions at 60 warm-up requests per scenario), and
 * when it runs depends on the order of the scenarios, not on their requests: counted, it moved chat's own figure by
 * 13 % between two runs of the same code. Everything else (the garbage collector included) counts.
 */
function outsideCompiler(file) {
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  let total = 0;
  let compiler = 0;
  for (const line of annotated.split('\n')) {
    const match = /^\s*([\d,]+) \(/.exec(line);
    if (!match) continue;
    const count = Number(match[1].replaceAll(',', ''));
    if (line.includes('PROGRAM TOTALS')) total = count;
    else if (line.includes('v8::internal::compiler::')) compiler += count;
  }
  return total - compiler;
}

function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-dialects-instructions-'));
  const out = path.join(work, 'callgrind.out');
  try {
    const load = os.loadavg()[0].toFixed(1);
    // What runs by the clock is kept out of the counted windows (valgrind stretches the wall time ~50-fold): no V8 memory reducer.
    const printed = execFileSync(
      'valgrind',
      ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, '--no-memory-reducer', path.join(__dirname, 'inject-cpu.js')],
      { env: { ...process.env, CALLGRIND: '1', REQUESTS: String(REQUESTS), WARMUP_REQUESTS: process.env.WARMUP_REQUESTS || '60' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 24 },
    );
    const groups = JSON.parse(printed.trim().split('\n').pop());
    const dumps = fs
      .readdirSync(work)
      .filter((name) => /^callgrind\.out(\.\d+)?$/.test(name))
      .sort((a, b) => Number(a.split('.')[2] ?? Infinity) - Number(b.split('.')[2] ?? Infinity))
      .map((name) => path.join(work, name))
      // The scenarios' dumps, not the one valgrind writes when the process ends.
      .filter((file) => !/^desc: Trigger: Program termination/m.test(fs.readFileSync(file, 'utf8')));
    const counts = dumps.map((file) => outsideCompiler(file) / REQUESTS);
    const expected = groups.reduce((sum, group) => sum + group.names.length, 0);
    if (counts.length !== expected) throw new Error(`${counts.length} callgrind dumps for ${expected} scenarios`);
    process.stdout.write(
      `bench/dialects/instructions: ${process.env.DIST || 'dist'}, Node ${process.version}, ${REQUESTS} requests per scenario under callgrind, load average ${load} at the start, ${os.loadavg()[0].toFixed(1)} at the end\n`,
    );
    process.stdout.write('mode    upstream   surface                   instructions/req (outside the optimising compiler)   vs chat\n');
    let at = 0;
    for (const group of groups) {
      const chat = counts[at];
      for (const name of group.names) {
        const count = counts[at++];
        const ratio = name === 'chat' ? '-' : `${count >= chat ? '+' : ''}${(100 * (count / chat - 1)).toFixed(1)} %`;
        process.stdout.write(`${group.mode.padEnd(7)} ${group.upstream.padEnd(10)} ${name.padEnd(25)} ${`${Math.round(count / 1000)}k`.padStart(12)}       ${ratio}\n`);
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main();
