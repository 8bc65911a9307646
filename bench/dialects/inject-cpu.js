// bench/dialects, in process: issue 28's ratios without a load generator. Each client surface's call against the
// same call on chat completions to the same upstream, in interleaved rounds:
// - to the OpenAI emulator: Responses sent as written (B19), stored and not; the same Responses call translated to
//   chat completions (the emulator registered again as openai_compatible, a kind without the Responses API); and
//   Anthropic Messages translated to chat completions (the 15 % target for translation);
// - to the Anthropic emulator: Messages sent as written (B16; same family, the 5 % target).
// The server application is built here and driven with Fastify's inject() (no sockets on the gateway side), the
// emulators in a process of their own; the measure is this process's CPU (process.cpuUsage, user + system) per
// request, each figure divided by the chat figure of the same round, mode and upstream, the medians of those ratios
// printed. Steadier than bench/dialects/run.js on a loaded machine: no load generator shares the cores' accounting.
// DIST=<another build's dist/> measures that build (its ratios against its own chat figures).
// Usage: npm run build && node bench/dialects/inject-cpu.js   (env: REQUESTS=400 ROUNDS=7 WARMUP_REQUESTS=600 DIST=)
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop } = require('../gateway/harness');

const REQUESTS = Number(process.env.REQUESTS || 400);
const ROUNDS = Number(process.env.ROUNDS || 7);
const WARMUP = Number(process.env.WARMUP_REQUESTS || 600);
const OPENAI_KEY = 'sk-bench-upstream';
const ANTHROPIC_KEY = 'sk-ant-bench-upstream';
const DIST = path.resolve(process.env.DIST || path.join(ROOT, 'dist'));
const API_TOKEN = 'bench-api-token';
const SYSTEM = 'You are a helpful assistant. Answer accurately and concisely.';
const PROMPT = 'Say hello';

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function main() {
  const emulators = await start([path.join(__dirname, 'emulators-process.js')], { BENCH_OPENAI_KEY: OPENAI_KEY, BENCH_ANTHROPIC_KEY: ANTHROPIC_KEY }, /ready (\S+ \S+)/);
  const [openaiUrl, anthropicUrl] = emulators.match.split(' ');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-dialects-inject-'));
  const configFile = path.join(work, 'tollgate.yaml');
  fs.writeFileSync(
    configFile,
    [
      'version: 1',
      `api: { token: "${API_TOKEN}" }`,
      'logs: { requests: false }',
      'providers:',
      `  openai: { url: "${openaiUrl}", api_key: "${OPENAI_KEY}", chat_model: gpt-test }`,
      // The same emulator as a kind without the Responses API: the translated path, for comparison.
      `  compat: { kind: openai_compatible, url: "${openaiUrl}", api_key: "${OPENAI_KEY}", chat_model: gpt-test }`,
      `  anthropic: { url: "${anthropicUrl}", api_key: "${ANTHROPIC_KEY}", chat_model: claude-haiku-4-5 }`,
      '',
    ].join('\n'),
  );
  let app;
  try {
    const { loadConfig } = require(path.join(DIST, 'src', 'config', 'config.loader'));
    const { createHttpApp } = require(path.join(DIST, 'src', 'server', 'http-server'));
    app = await createHttpApp(loadConfig({ cwd: work, env: { ...process.env, TOLLGATE_CONFIG: configFile } }), false);
    await app.init();
    const fastify = app.getHttpAdapter().getInstance();
    await fastify.ready();
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` };
    const messagesHeaders = { 'content-type': 'application/json', 'x-api-key': API_TOKEN, 'anthropic-version': '2023-06-01' };
    const scenario = (name, url, body, sent = headers) => ({ name, request: { method: 'POST', url, headers: sent, payload: JSON.stringify(body) } });
    const chat = (model, streamed) => scenario('chat', '/openai/v1/chat/completions', { model, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: PROMPT }], ...streamed });
    const messages = (name, model, streamed) =>
      scenario(name, '/anthropic/v1/messages', { model, max_tokens: 256, system: SYSTEM, messages: [{ role: 'user', content: PROMPT }], ...streamed }, messagesHeaders);
    const groups = [false, true].flatMap((stream) => {
      const streamed = stream ? { stream: true } : {};
      const mode = stream ? 'stream' : 'plain';
      const model = 'openai/gpt-test';
      return [
        {
          mode,
          upstream: 'openai',
          scenarios: [
            chat(model, streamed),
            scenario('responses (as written)', '/openai/v1/responses', { model, instructions: SYSTEM, input: PROMPT, store: false, ...streamed }),
            scenario('responses stored', '/openai/v1/responses', { model, instructions: SYSTEM, input: PROMPT, ...streamed }),
            scenario('responses (translated)', '/openai/v1/responses', { model: 'compat/gpt-test', instructions: SYSTEM, input: PROMPT, store: false, ...streamed }),
            messages('messages (translated)', model, streamed),
          ],
        },
        { mode, upstream: 'anthropic', scenarios: [chat('anthropic/claude-haiku-4-5', streamed), messages('messages (as written)', 'anthropic/claude-haiku-4-5', streamed)] },
      ];
    });
    const all = groups.flatMap((group) => group.scenarios);
    const run = async ({ request }, count) => {
      for (let i = 0; i < count; i++) {
        const response = await fastify.inject(request);
        if (response.statusCode !== 200) throw new Error(`${request.url}: status ${response.statusCode}: ${response.body.slice(0, 200)}`);
      }
    };
    for (const entry of all) await run(entry, WARMUP);
    if (process.env.CALLGRIND) {
      // Under callgrind (instructions.js): each scenario's REQUESTS counted alone, one dump per scenario, in order.
      callgrind('--instr=on');
      callgrind('--zero');
      for (const entry of all) {
        await run(entry, REQUESTS);
        callgrind('--dump');
      }
      callgrind('--instr=off');
      console.log(JSON.stringify(groups.map((group) => ({ mode: group.mode, upstream: group.upstream, names: group.scenarios.map((entry) => entry.name) }))));
      return;
    }
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
    console.log(`bench/dialects/inject-cpu: gateway CPU per request in process (inject), ${DIST}, Node ${process.version}, ${ROUNDS} rounds of ${REQUESTS} requests, ${os.cpus().length} cores, load ${os.loadavg().map((value) => value.toFixed(1)).join(' ')}`);
    console.log('mode    upstream   surface                   CPU µs/req (median)   vs chat (median of per-round ratios)   per round');
    for (const group of groups) {
      const baseline = cpu.get(group.scenarios[0]);
      for (const entry of group.scenarios) {
        const samples = cpu.get(entry);
        const ratios = samples.map((value, round) => value / baseline[round]);
        const ratio = median(ratios);
        const percent = (value) => `${value >= 1 ? '+' : ''}${((value - 1) * 100).toFixed(1)} %`;
        console.log(
          `${group.mode.padEnd(7)} ${group.upstream.padEnd(10)} ${entry.name.padEnd(25)} ${median(samples).toFixed(0).padStart(8)}              ` +
            `${(entry === group.scenarios[0] ? '-' : percent(ratio)).padEnd(39)}${entry === group.scenarios[0] ? '' : ratios.map((value) => ((value - 1) * 100).toFixed(0)).join(' ')}`,
        );
      }
    }
  } finally {
    await app?.close();
    await stop(emulators.child);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function callgrind(command) {
  execFileSync('callgrind_control', [command, String(process.pid)], { stdio: 'ignore' });
}

main().catch((error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
