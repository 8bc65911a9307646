'use strict';
// What the in-process benches (bench/tracing/inject-cpu.js, bench/dialects/same-family-process.js) measure with:
// the event-loop thread's CPU time, and a CPU profile of the measured requests only.
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

module.exports = { mainThreadMicros, startProfile };
