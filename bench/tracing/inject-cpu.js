'use strict';
// One variant of bench/tracing/cpu.js in its own process: the server application built from TOLLGATE_CONFIG
// (the real createHttpApp, tracing installed or not), warmed up, then REQUESTS sequential chat requests
// through Fastify's inject() against the emulator process; prints the process's CPU microseconds per request
// (process.cpuUsage: user + system, the exporters' work included), after the exports have drained.
const { mainThreadMicros, startProfile } = require('../in-process-cpu');
const path = require('node:path');
// DIST: another build's dist/ (cpu.js's BASELINE_DIST), measured the same way.
const DIST = process.env.DIST || path.join(__dirname, '..', '..', 'dist');
const { loadConfig } = require(path.join(DIST, 'src', 'config', 'config.loader'));
const { createHttpApp } = require(path.join(DIST, 'src', 'server', 'http-server'));

const REQUESTS = Number(process.env.REQUESTS || 3000);
const WARMUP = Number(process.env.WARMUP_REQUESTS || 1500);
const STREAM = process.env.ROUTE === 'stream';

async function main() {
  const app = await createHttpApp(loadConfig({ cwd: process.cwd(), env: process.env }), false);
  await app.init();
  const fastify = app.getHttpAdapter().getInstance();
  await fastify.ready();
  const payload = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Say hello' }], ...(STREAM ? { stream: true } : {}) });
  // ADMIN_TOKEN (bench/governance/instructions.js): the requests are made with an API key made through the admin API.
  const bearer = process.env.ADMIN_TOKEN ? await createKey(fastify) : process.env.API_TOKEN;
  const request = { method: 'POST', url: '/openai/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` }, payload };
  const run = async (count) => {
    for (let i = 0; i < count; i++) {
      const response = await fastify.inject(request);
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${response.body.slice(0, 200)}`);
    }
  };
  await run(WARMUP);
  // Let the warm-up's exports leave before measuring.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const profiler = process.env.PROFILE ? await startProfile() : undefined;
  // Under `valgrind --tool=callgrind --instr-atstart=no` (instructions.js): instructions counted for the measured requests only.
  if (process.env.CALLGRIND) callgrindInstrumentation('on');
  const before = process.cpuUsage();
  const mainBefore = mainThreadMicros();
  await run(REQUESTS);
  // The last batch of spans is exported within the measured time: at most one scheduled delay later.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const used = process.cpuUsage(before);
  const main = mainThreadMicros() - mainBefore;
  if (process.env.CALLGRIND) callgrindInstrumentation('off');
  if (profiler) await profiler.stop(process.env.PROFILE);
  // Both: the whole process (V8's compiler and GC threads included) and the event-loop thread alone.
  process.stdout.write(`${((used.user + used.system) / REQUESTS).toFixed(2)} ${(main / REQUESTS).toFixed(2)}\n`);
  await app.close();
}

async function createKey(fastify) {
  const response = await fastify.inject({
    method: 'POST',
    url: '/v1/admin/keys',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.ADMIN_TOKEN}` },
    payload: JSON.stringify({ tenant: 'bench', name: 'bench-instructions' }),
  });
  if (response.statusCode !== 201) throw new Error(`key not created: ${response.statusCode} ${response.body.slice(0, 200)}`);
  return response.json().key;
}

function callgrindInstrumentation(state) {
  require('node:child_process').execFileSync('callgrind_control', [`--instr=${state}`, String(process.pid)], { stdio: 'ignore' });
}

main().catch((error) => {
  process.stderr.write(`inject-cpu: ${error.stack}\n`);
  process.exit(1);
});
