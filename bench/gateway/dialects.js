'use strict';
// bench/gateway/dialects.js: the gateway's CPU time per request on /anthropic/v1/messages routed to an
// Anthropic upstream (sent as written, docs/decisions.md B15) against /openai/v1/chat/completions routed to an
// OpenAI upstream, the same short conversation, plain and streamed. Both emulators run in processes of their own;
// the gateway's CPU (user + system, from /proc) is read around each load run, and the routes alternate within
// each round so a noisy neighbour weighs on both alike. Prints medians and the ratio to the chat route.
// Usage: npm run build && node bench/gateway/dialects.js   (env: ROUNDS=5 DURATION=4 CONNECTIONS=10)
const path = require('node:path');
const { ROOT, start, stop, throughput } = require('./harness');

const ROUNDS = Number(process.env.ROUNDS || 5);
const DURATION = Number(process.env.DURATION || 4);
const CONNECTIONS = Number(process.env.CONNECTIONS || 10);
const API_KEY = 'sk-bench-upstream';
const API_TOKEN = 'bench-api-token';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function routes(gatewayUrl) {
  const system = 'You are a helpful assistant. Answer accurately and concisely.';
  const openAi = { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` };
  const anthropic = { 'content-type': 'application/json', 'x-api-key': API_TOKEN, 'anthropic-version': '2023-06-01' };
  const chat = { model: 'openai/gpt-test', messages: [{ role: 'system', content: system }, { role: 'user', content: 'Say hello' }] };
  const messages = { model: 'anthropic/claude-bench', max_tokens: 256, system, messages: [{ role: 'user', content: 'Say hello' }] };
  const post = (path, headers, body) => ({ origin: gatewayUrl, path, headers, body: JSON.stringify(body) });
  return {
    'openai-chat': post('/openai/v1/chat/completions', openAi, chat),
    'anthropic-native': post('/anthropic/v1/messages', anthropic, messages),
    'openai-chat-stream': post('/openai/v1/chat/completions', openAi, { ...chat, stream: true }),
    'anthropic-native-stream': post('/anthropic/v1/messages', anthropic, { ...messages, stream: true }),
  };
}

async function main() {
  const openai = await start([path.join(__dirname, 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const anthropic = await start([path.join(__dirname, 'anthropic-emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const gateway = await start(
    [path.join(ROOT, 'dist', 'src', 'main.js')],
    { PORT: '0', API_TOKEN, OPENAI_API_KEY: API_KEY, OPENAI_URL: openai.match, OPENAI_CHAT_MODEL: 'gpt-test', ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_URL: anthropic.match, ANTHROPIC_CHAT_MODEL: 'claude-bench' },
    /listening on (http:\/\/[^\s"]+)/,
  );
  try {
    const measured = routes(gateway.match);
    const watched = { gateway: gateway.child.pid };
    for (const request of Object.values(measured)) await throughput(request, { duration: 2, connections: CONNECTIONS });
    const cpu = Object.fromEntries(Object.keys(measured).map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, request] of Object.entries(measured)) cpu[name].push((await throughput(request, { duration: DURATION, connections: CONNECTIONS, watched })).cpu.gateway);
    }
    for (const [name, runs] of Object.entries(cpu)) {
      const base = name.endsWith('-stream') ? cpu['openai-chat-stream'] : cpu['openai-chat'];
      console.log(`${name.padEnd(24)} ${median(runs).toFixed(0).padStart(6)} µs CPU/request   ${(median(runs) / median(base)).toFixed(3)}x of the chat route`);
    }
  } finally {
    await Promise.all([stop(gateway.child), stop(openai.child), stop(anthropic.child)]);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
