'use strict';
// What the in-process benches (bench/tracing/inject-cpu.js, bench/dialects/same-family-process.js) measure with:
// the event-loop thread's CPU time, a CPU profile of the measured requests only, and their instruction count.
const fs = require('node:fs');

/** CPU time of the main (event-loop) thread, from /proc (Linux), in microseconds; clock ticks of 10 ms. */
function mainThreadMicros() {
  const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
}

/** A CPU profile of the measured requests only (PROFILE=file.cpuprofile), for finding where a difference goes. */
async function startProfile() {
  const { Session } = require('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.start');
  return {
    stop: async (file) => {
      const { profile } = await post('Profiler.stop');
      fs.writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * Instructions callgrind counted for one run of bench/tracing/inject-cpu.js under `valgrind --tool=callgrind
 * --instr-atstart=no node --no-opt --no-memory-reducer`: the script switches counting on for its measured requests
 * only (CALLGRIND=1 in `env`), and no V8 memory reducer runs by the clock meanwhile. `out`: the callgrind file.
 */
function injectInstructions(env, cwd, out) {
  const { execFileSync } = require('node:child_process');
  const path = require('node:path');
  const script = path.join(__dirname, 'tracing', 'inject-cpu.js');
  execFileSync('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, '--no-opt', '--no-memory-reducer', script], {
    cwd,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const totals = fs.readFileSync(out, 'utf8').match(/^totals: (\d+)/m);
  if (!totals) throw new Error(`no totals in ${out}`);
  return Number(totals[1]);
}

module.exports = { injectInstructions, mainThreadMicros, startProfile };
