'use strict';
// bench/dialects, in process: the same-family pass-through of the Responses API to an OpenAI upstream
// (docs/decisions.md B19) against the same call on chat completions, and against the Responses call translated to
// chat completions (the same emulator registered as openai_compatible). The server application is built here and
// driven with Fastify's inject() (no sockets on the gateway side), the emulators in a process of their own; the
// measure is this process's CPU (process.cpuUsage, user + system) per request, in interleaved rounds, each
// Responses figure divided by the chat figure of the same round and mode, the medians of those ratios printed.
// Steadier than bench/dialects/run.js on a loaded machine: no load generator shares the cores' accounting.
// Usage: npm run build && node bench/dialects/inject-cpu.js   (env: REQUESTS=400 ROUNDS=7 WARMUP_REQUESTS=600)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop } = require('../gateway/harness');

const REQUESTS = Number(process.env.REQUESTS || 400);
const ROUNDS = Number(process.env.ROUNDS || 7);
const WARMUP = Number(process.env.WARMUP_REQUESTS || 600);
const OPENAI_KEY = 'sk-bench-upstream';
const API_TOKEN = 'bench-api-token';
const SYSTEM = 'You are a helpful assistant. Answer accurately and concisely.';
const PROMPT = 'Say hello';

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function main() {
  const emulators = await start([path.join(__dirname, 'emulators-process.js')], { BENCH_OPENAI_KEY: OPENAI_KEY, BENCH_ANTHROPIC_KEY: 'unused' }, /ready (\S+) \S+/);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-dialects-inject-'));
  const configFile = path.join(work, 'tollgate.yaml');
  fs.writeFileSync(
    configFile,
    [
      'version: 1',
      `api: { token: "${API_TOKEN}" }`,
      'logs: { requests: false }',
      'providers:',
      `  openai: { url: "${emulators.match}", api_key: "${OPENAI_KEY}", chat_model: gpt-test }`,
      // The same emulator as a kind without the Responses API: the translated path, for comparison.
      `  compat: { kind: openai_compatible, url: "${emulators.match}", api_key: "${OPENAI_KEY}", chat_model: gpt-test }`,
      '',
    ].join('\n'),
  );
  let app;
  try {
    const { loadConfig } = require(path.join(ROOT, 'dist', 'src', 'config', 'config.loader'));
    const { createHttpApp } = require(path.join(ROOT, 'dist', 'src', 'server', 'http-server'));
    app = await createHttpApp(loadConfig({ cwd: work, env: { ...process.env, TOLLGATE_CONFIG: configFile } }), false);
    await app.init();
    const fastify = app.getHttpAdapter().getInstance();
    await fastify.ready();
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` };
    const scenario = (name, url, body) => ({ name, request: { method: 'POST', url, headers, payload: JSON.stringify(body) } });
    const model = 'openai/gpt-test';
    const groups = [false, true].map((stream) => {
      const streamed = stream ? { stream: true } : {};
      return {
        mode: stream ? 'stream' : 'plain',
        scenarios: [
          scenario('chat', '/openai/v1/chat/completions', { model, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: PROMPT }], ...streamed }),
          scenario('responses (as written)', '/openai/v1/responses', { model, instructions: SYSTEM, input: PROMPT, store: false, ...streamed }),
          scenario('responses stored', '/openai/v1/responses', { model, instructions: SYSTEM, input: PROMPT, ...streamed }),
          scenario('responses (translated)', '/openai/v1/responses', { model: 'compat/gpt-test', instructions: SYSTEM, input: PROMPT, store: false, ...streamed }),
        ],
      };
    });
    const all = groups.flatMap((group) => group.scenarios);
    const run = async ({ request }, count) => {
      for (let i = 0; i < count; i++) {
        const response = await fastify.inject(request);
        if (response.statusCode !== 200) throw new Error(`${request.url}: status ${response.statusCode}: ${response.body.slice(0, 200)}`);
      }
    };
    for (const entry of all) await run(entry, WARMUP);
    const cpu = new Map(all.map((entry) => [entry, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = all.map((_, index) => all[(index + round) % all.length]);
      for (const entry of order) {
        const before = process.cpuUsage();
        await run(entry, REQUESTS);
        const used = process.cpuUsage(before);
        cpu.get(entry)[round] = (used.user + used.system) / REQUESTS;
      }
      process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
    }
    console.log(`bench/dialects/inject-cpu: gateway CPU per request in process (inject), ${ROUNDS} rounds of ${REQUESTS} requests, ${os.cpus().length} cores, load ${os.loadavg().map((value) => value.toFixed(1)).join(' ')}`);
    console.log('mode    surface                   CPU µs/req (median)   vs chat (median of per-round ratios)');
    for (const group of groups) {
      const baseline = cpu.get(group.scenarios[0]);
      for (const entry of group.scenarios) {
        const samples = cpu.get(entry);
        const ratio = median(samples.map((value, round) => value / baseline[round]));
        console.log(`${group.mode.padEnd(7)} ${entry.name.padEnd(25)} ${median(samples).toFixed(0).padStart(8)}              ${ratio === 1 ? '-' : `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)} %`}`);
      }
    }
  } finally {
    await app?.close();
    await stop(emulators.child);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
