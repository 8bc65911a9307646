'use strict';
// bench/dialects: what a client's dialect costs. The same short conversation through each surface (Chat
// Completions, the Responses API, Anthropic Messages, Gemini generateContent), routed to an OpenAI-format and
// to an Anthropic upstream (the emulators of test/emulators in a process of their own), plain and streamed.
// Two of them are same-family pass-throughs, the body sent as written (docs/decisions.md B16, B19): Messages to
// the Anthropic upstream, and Responses to the OpenAI one (its /v1/responses; `responses-stored` stores the answer too).
// The measure is Tollgate's CPU time per request (/proc, user + system) under load: it is what translation
// adds, and it is steadier than latency on a shared machine. Each scenario's cost is divided by the
// Chat Completions call to the same upstream in the same streaming mode, within a round; the rounds rotate
// the order, and the medians of those ratios are printed.
// Usage: npm run build && node bench/dialects/run.js   (env: CONNECTIONS=10 DURATION=4 ROUNDS=5 WARMUP=1)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop, throughput } = require('../gateway/harness');

const CONNECTIONS = Number(process.env.CONNECTIONS || 10);
const DURATION = Number(process.env.DURATION || 4);
const ROUNDS = Number(process.env.ROUNDS || 5);
const WARMUP = Number(process.env.WARMUP || 1);

const OPENAI_KEY = 'sk-bench-upstream';
const ANTHROPIC_KEY = 'sk-ant-bench-upstream';
const API_TOKEN = 'bench-api-token';
const SYSTEM = 'You are a helpful assistant. Answer accurately and concisely.';
const PROMPT = 'Say hello';
const UPSTREAMS = { openai: 'bench-gpt', anthropic: 'bench-claude' };

function config(openaiUrl, anthropicUrl) {
  return [
    'version: 1',
    `api: { token: "${API_TOKEN}" }`,
    'logs: { requests: false }',
    'providers:',
    `  openai: { url: "${openaiUrl}", api_key: "${OPENAI_KEY}", chat_model: gpt-test }`,
    `  anthropic: { url: "${anthropicUrl}", api_key: "${ANTHROPIC_KEY}", chat_model: claude-sonnet-4-5 }`,
    'ai:',
    `  model_aliases: { ${UPSTREAMS.openai}: [openai/gpt-test], ${UPSTREAMS.anthropic}: [anthropic/claude-sonnet-4-5] }`,
    '',
  ].join('\n');
}

/** One request per surface for `model`, streamed or not: {name, surface, request}. */
function surfaces(origin, model, stream) {
  const bearer = { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` };
  const chat = { model, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: PROMPT }], ...(stream ? { stream: true } : {}) };
  const responses = { model, instructions: SYSTEM, input: PROMPT, ...(stream ? { stream: true } : {}) };
  const messages = { model, max_tokens: 256, system: SYSTEM, messages: [{ role: 'user', content: PROMPT }], ...(stream ? { stream: true } : {}) };
  const gemini = { systemInstruction: { parts: [{ text: SYSTEM }] }, contents: [{ role: 'user', parts: [{ text: PROMPT }] }] };
  const list = [
    { surface: 'chat', path: '/openai/v1/chat/completions', headers: bearer, body: chat },
    { surface: 'responses', path: '/openai/v1/responses', headers: bearer, body: { ...responses, store: false } },
    { surface: 'responses-stored', path: '/openai/v1/responses', headers: bearer, body: responses },
    { surface: 'messages', path: '/anthropic/v1/messages', headers: { 'content-type': 'application/json', 'x-api-key': API_TOKEN, 'anthropic-version': '2023-06-01' }, body: messages },
    {
      surface: 'gemini',
      path: `/gemini/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
      headers: { 'content-type': 'application/json', 'x-goog-api-key': API_TOKEN },
      body: gemini,
    },
  ];
  return list.map((entry) => ({ ...entry, request: { origin, path: entry.path, headers: entry.headers, body: JSON.stringify(entry.body) } }));
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function main() {
  const emulators = await start([path.join(__dirname, 'emulators-process.js')], { BENCH_OPENAI_KEY: OPENAI_KEY, BENCH_ANTHROPIC_KEY: ANTHROPIC_KEY }, /ready (\S+ \S+)/);
  const [openaiUrl, anthropicUrl] = emulators.match.split(' ');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-dialects-'));
  const configFile = path.join(work, 'tollgate.yaml');
  fs.writeFileSync(configFile, config(openaiUrl, anthropicUrl));
  let gateway;
  try {
    gateway = await start([path.join(ROOT, 'dist', 'src', 'main.js')], { PORT: '0', TOLLGATE_CONFIG: configFile }, /listening on (http:\/\/[^\s"]+)/);
    const origin = gateway.match;
    const groups = [];
    for (const [upstream, model] of Object.entries(UPSTREAMS)) {
      for (const stream of [false, true]) groups.push({ upstream, stream, scenarios: surfaces(origin, model, stream) });
    }
    const all = groups.flatMap((group) => group.scenarios);
    const watched = { tollgate: gateway.child.pid };
    for (const scenario of all) await throughput(scenario.request, { duration: WARMUP, connections: CONNECTIONS, watched });
    const cpu = new Map(all.map((scenario) => [scenario, []]));
    // Rotating by 3 of the 20 scenarios a round puts each at another place in every round.
    for (let round = 0; round < ROUNDS; round++) {
      const order = all.map((_, index) => all[(index + round * 3) % all.length]);
      for (const scenario of order) {
        const result = await throughput(scenario.request, { duration: DURATION, connections: CONNECTIONS, watched });
        cpu.get(scenario)[round] = result.cpu.tollgate;
      }
      process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
    }
    console.log(`bench/dialects: Tollgate CPU per request, ${ROUNDS} rounds of ${DURATION} s at ${CONNECTIONS} connections, ${os.cpus().length} cores`);
    console.log('upstream   mode    surface            CPU µs/req (median)   vs chat (median of per-round ratios)');
    for (const group of groups) {
      const baseline = cpu.get(group.scenarios[0]);
      for (const scenario of group.scenarios) {
        const samples = cpu.get(scenario);
        const ratio = median(samples.map((value, round) => value / baseline[round]));
        console.log(
          `${group.upstream.padEnd(10)} ${(group.stream ? 'stream' : 'plain').padEnd(7)} ${scenario.surface.padEnd(18)} ${median(samples).toFixed(0).padStart(8)}              ${ratio === 1 ? '-' : `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)} %`}`,
        );
      }
    }
  } finally {
    if (gateway) await stop(gateway.child);
    await stop(emulators.child);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
