'use strict';
// One variant of bench/dialects/same-family.js in its own process: the server application of the build under
// DIST (default this checkout's dist/), warmed up, then REQUESTS sequential requests through Fastify's inject() on
// SURFACE (chat: /openai/v1/chat/completions, messages: /anthropic/v1/messages) to the Anthropic emulator process,
// streamed when STREAM=1; prints the process's CPU microseconds per request (user + system) and the event-loop
// thread's alone. PROFILE=file.cpuprofile writes a CPU profile of the measured requests.
const { mainThreadMicros, startProfile } = require('../in-process-cpu');
const path = require('node:path');

const DIST = process.env.DIST || path.join(__dirname, '..', '..', 'dist');
const { loadConfig } = require(path.join(DIST, 'src', 'config', 'config.loader'));
const { createHttpApp } = require(path.join(DIST, 'src', 'server', 'http-server'));

const REQUESTS = Number(process.env.REQUESTS || 2000);
const WARMUP = Number(process.env.WARMUP_REQUESTS || 1000);
const STREAM = process.env.STREAM === '1';
const SYSTEM = 'You are a helpful assistant. Answer accurately and concisely.';
const PROMPT = 'Say hello';

function request() {
  const stream = STREAM ? { stream: true } : {};
  if (process.env.SURFACE === 'messages') {
    const body = { model: 'bench-claude', max_tokens: 256, system: SYSTEM, messages: [{ role: 'user', content: PROMPT }], ...stream };
    const headers = { 'content-type': 'application/json', 'x-api-key': process.env.API_TOKEN, 'anthropic-version': '2023-06-01' };
    return { method: 'POST', url: '/anthropic/v1/messages', headers, payload: JSON.stringify(body) };
  }
  const body = { model: 'bench-claude', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: PROMPT }], ...stream };
  return { method: 'POST', url: '/openai/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.API_TOKEN}` }, payload: JSON.stringify(body) };
}

async function main() {
  const app = await createHttpApp(loadConfig({ cwd: process.cwd(), env: process.env }), false);
  await app.init();
  const fastify = app.getHttpAdapter().getInstance();
  await fastify.ready();
  const sent = request();
  const run = async (count) => {
    for (let i = 0; i < count; i++) {
      const response = await fastify.inject(sent);
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${response.body.slice(0, 200)}`);
    }
  };
  await run(WARMUP);
  const profiler = process.env.PROFILE ? await startProfile() : undefined;
  const before = process.cpuUsage();
  const mainBefore = mainThreadMicros();
  await run(REQUESTS);
  const used = process.cpuUsage(before);
  const main = mainThreadMicros() - mainBefore;
  if (profiler) await profiler.stop(process.env.PROFILE);
  process.stdout.write(`${((used.user + used.system) / REQUESTS).toFixed(2)} ${(main / REQUESTS).toFixed(2)}\n`);
  await app.close();
}

main().catch((error) => {
  process.stderr.write(`same-family-process: ${error.stack}\n`);
  process.exit(1);
});
