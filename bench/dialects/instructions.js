'use strict';
// bench/dialects/instructions.js: inject-cpu.js's ratios counted in instructions (valgrind's callgrind), which a
// loaded machine does not move: the kernel's tick-sampled CPU time moved one variant's per-round ratio from -60 %
// to +136 % at load 13, where an instruction count is the same run after run. One process runs every scenario
// (warmed up WARMUP_REQUESTS each, optimised as in a real server: no --no-opt), then counts each scenario's REQUESTS
// alone (one callgrind dump per scenario); prints instructions per request and each against chat to the same upstream
// in the same mode. DIST=<another build's dist/> counts that build.
// Usage: npm run build && node bench/dialects/instructions.js   (env: REQUESTS=100 WARMUP_REQUESTS=60 DIST=)
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REQUESTS = Number(process.env.REQUESTS || 100);

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
      .map((name) => fs.readFileSync(path.join(work, name), 'utf8'))
      // The scenarios' dumps, not the one valgrind writes when the process ends.
      .filter((text) => !/^desc: Trigger: Program termination/m.test(text));
    const counts = dumps.map((text) => Number(text.match(/^totals: (\d+)/m)?.[1]) / REQUESTS);
    const expected = groups.reduce((sum, group) => sum + group.names.length, 0);
    if (counts.length !== expected) throw new Error(`${counts.length} callgrind dumps for ${expected} scenarios`);
    process.stdout.write(
      `bench/dialects/instructions: ${process.env.DIST || 'dist'}, Node ${process.version}, ${REQUESTS} requests per scenario under callgrind, load average ${load} at the start, ${os.loadavg()[0].toFixed(1)} at the end\n`,
    );
    process.stdout.write('mode    upstream   surface                   instructions/req   vs chat\n');
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
