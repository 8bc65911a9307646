'use strict';
// Shared by the benches: the OpenAI emulator and the built Tollgate server as child processes, the request
// pairs (direct to the emulator / through the gateway), per-process CPU readings and a load run measuring them.
const autocannon = require('autocannon');
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const API_KEY = 'sk-bench-upstream';
const API_TOKEN = 'bench-api-token';

/** Spawns a child and resolves with it and the first regex match of its output. */
function start(args, env, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: os.tmpdir(), env: { PATH: process.env.PATH, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let ready = false;
    const onData = (chunk) => {
      // Once ready, output is only drained: a child that logs per request must not grow this string.
      if (ready) return;
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) {
        ready = true;
        resolve({ child, match: match[1] });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}:\n${output}`)));
  });
}

/**
 * The emulator, then the gateway pointed at it; `nodeArgs` go before the gateway's entry (e.g. --cpu-prof),
 * `env` is added to the gateway's (e.g. TOLLGATE_CONFIG).
 */
async function startServers(nodeArgs = [], env = {}) {
  const emulator = await start([path.join(__dirname, 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  try {
    const gateway = await start(
      [...nodeArgs, path.join(ROOT, 'dist', 'src', 'main.js')],
      { PORT: '0', API_TOKEN, OPENAI_API_KEY: API_KEY, OPENAI_URL: emulator.match, OPENAI_CHAT_MODEL: 'gpt-test', OPENAI_EMBEDDING_MODEL: 'embed-test', ...env },
      /listening on (http:\/\/[^\s"]+)/,
    );
    return { emulator, gateway };
  } catch (error) {
    emulator.child.kill('SIGTERM');
    throw error;
  }
}

/** Resolves once the child has exited; SIGTERM lets the gateway shut down cleanly (and write a CPU profile). */
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

/** The same operation sent directly to the emulator and through the gateway. */
function scenarios(emulatorUrl, gatewayUrl) {
  const upstream = { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` };
  const gateway = { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` };
  const emulator = new URL(emulatorUrl);
  return [
    {
      name: 'generate',
      direct: { origin: emulator.origin, path: `${emulator.pathname}/chat/completions`, headers: upstream, body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'system', content: 'You are a helpful assistant. Answer accurately and concisely.' }, { role: 'user', content: 'Say hello' }] }) },
      gateway: { origin: gatewayUrl, path: '/v1/generate', headers: gateway, body: JSON.stringify({ prompt: 'Say hello' }) },
    },
    {
      name: 'embeddings',
      // Base64 is what the official SDK (and Tollgate's adapter) asks for.
      direct: { origin: emulator.origin, path: `${emulator.pathname}/embeddings`, headers: upstream, body: JSON.stringify({ model: 'embed-test', input: 'Say hello', encoding_format: 'base64' }) },
      gateway: { origin: gatewayUrl, path: '/v1/embeddings', headers: gateway, body: JSON.stringify({ input: 'Say hello' }) },
    },
  ];
}

/**
 * Tollgate's OpenAI-compatible chat route, plain and streamed (profile.js; bench/compare measures them against
 * peers), and the same conversation on the Responses and Anthropic Messages surfaces (profile.js;
 * bench/dialects measures what each dialect costs).
 */
function openAiScenarios(gatewayUrl, bearer = API_TOKEN) {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${bearer}` };
  const system = 'You are a helpful assistant. Answer accurately and concisely.';
  const messages = [{ role: 'system', content: system }, { role: 'user', content: 'Say hello' }];
  const responses = { model: 'gpt-test', instructions: system, input: 'Say hello', store: false };
  const anthropic = { model: 'gpt-test', max_tokens: 256, system, messages: [{ role: 'user', content: 'Say hello' }] };
  const anthropicHeaders = { 'content-type': 'application/json', 'x-api-key': bearer, 'anthropic-version': '2023-06-01' };
  return [
    { name: 'openai-chat', gateway: { origin: gatewayUrl, path: '/openai/v1/chat/completions', headers, body: JSON.stringify({ model: 'gpt-test', messages }) } },
    { name: 'openai-chat-stream', gateway: { origin: gatewayUrl, path: '/openai/v1/chat/completions', headers, body: JSON.stringify({ model: 'gpt-test', messages, stream: true }) } },
    { name: 'openai-responses', gateway: { origin: gatewayUrl, path: '/openai/v1/responses', headers, body: JSON.stringify(responses) } },
    { name: 'openai-responses-stream', gateway: { origin: gatewayUrl, path: '/openai/v1/responses', headers, body: JSON.stringify({ ...responses, stream: true }) } },
    { name: 'anthropic-messages', gateway: { origin: gatewayUrl, path: '/anthropic/v1/messages', headers: anthropicHeaders, body: JSON.stringify(anthropic) } },
    { name: 'anthropic-messages-stream', gateway: { origin: gatewayUrl, path: '/anthropic/v1/messages', headers: anthropicHeaders, body: JSON.stringify({ ...anthropic, stream: true }) } },
  ];
}

/** Kernel clock ticks per second, the unit of /proc CPU times (100 almost everywhere). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system) a process has used so far, in microseconds; undefined where /proc is missing. */
function cpuMicros(pid) {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat, counted after the parenthesised command name.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/**
 * Requests per second of `request` ({origin, path, headers, body}, POSTed) at `connections` for `duration`
 * seconds, and the CPU microseconds each watched process (name -> pid) spent per request. Any failed request
 * fails the run.
 */
async function throughput(request, { duration, connections, watched = {} }) {
  const before = Object.fromEntries(Object.entries(watched).map(([name, pid]) => [name, cpuMicros(pid)]));
  const result = await autocannon({ url: request.origin + request.path, method: 'POST', headers: request.headers, body: request.body, connections, duration });
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0) throw new Error(`${request.origin}${request.path}: ${failed} failed requests`);
  const cpu = {};
  for (const [name, pid] of Object.entries(watched)) {
    const after = cpuMicros(pid);
    if (before[name] !== undefined && after !== undefined) cpu[name] = (after - before[name]) / result.requests.total;
  }
  return { rps: result.requests.average, total: result.requests.total, cpu };
}

module.exports = { ROOT, cpuMicros, openAiScenarios, scenarios, start, startServers, stop, throughput };
