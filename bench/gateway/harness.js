'use strict';
// Shared by the benches: the OpenAI emulator and the built Tollgate server as child processes, the request
// pairs (direct to the emulator / through the gateway), per-process CPU readings, a load run measuring them, and
// the chat path's CPU per request compared across configurations (bench/governance, bench/tracing).
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

/** The knobs of compareChatCpu, from the environment: CONNECTIONS=10 DURATION=5 ROUNDS=5 WARMUP=2 ROUTE=chat|stream. */
function chatCpuSettings() {
  return {
    connections: Number(process.env.CONNECTIONS || 10),
    duration: Number(process.env.DURATION || 5),
    rounds: Number(process.env.ROUNDS || 5),
    warmup: Number(process.env.WARMUP || 2),
    stream: process.env.ROUTE === 'stream',
  };
}

/** The median of the figures there are (no CPU figure where /proc is missing). */
function median(values) {
  const sorted = values.filter((value) => value !== undefined).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * The chat path's CPU per request under each configuration of `configs` (variant name -> Tollgate YAML; the
 * first is the baseline): one Tollgate process per variant on the OpenAI emulator, loaded on
 * /openai/v1/chat/completions in interleaved rounds whose order rotates, every variant in a fresh process each
 * round. Prints each round, then each variant's median req/s and CPU per request and the median of its per-round
 * ratios to the baseline of the same round. `heading` starts the first line; `bearerOf(name, origin)`, where
 * given, resolves to the credential a variant is called with (undefined: the shared API token).
 */
async function compareChatCpu({ heading, configs, settings, bearerOf }) {
  const { connections, duration, rounds, warmup, stream } = settings;
  const names = Object.keys(configs);
  const baseline = names[0];
  const emulator = await start([path.join(__dirname, 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-chat-cpu-'));
  const servers = new Set();
  try {
    const files = {};
    for (const [index, name] of names.entries()) {
      files[name] = path.join(configDir, `variant-${index}.yaml`);
      fs.writeFileSync(files[name], configs[name]);
    }
    const load = async (target, seconds) => {
      const request = {
        origin: target.origin,
        path: '/openai/v1/chat/completions',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${target.bearer}` },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Say hello' }], ...(stream ? { stream: true } : {}) }),
      };
      const { rps, cpu } = await throughput(request, { duration: seconds, connections, watched: { server: target.child.pid } });
      return { rps, cpu: cpu.server };
    };
    process.stdout.write(
      `${heading}; Node ${process.version}, ${os.cpus().length} CPUs; ` +
        `${connections} connections x ${duration} s after ${warmup} s of warm-up, ${rounds} interleaved rounds, fresh processes every round\n\n`,
    );
    const runs = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      // Fresh processes each round: one process can run a few per cent slower than another for its whole life.
      const order = names.map((_, i) => names[(i + round) % names.length]);
      for (const name of order) {
        const server = await start(
          [path.join(ROOT, 'dist', 'src', 'main.js')],
          { PORT: '0', API_TOKEN, TOLLGATE_CONFIG: files[name], OPENAI_API_KEY: API_KEY, OPENAI_URL: emulator.match, OPENAI_CHAT_MODEL: 'gpt-test', TOLLGATE_DEFAULT_PROVIDER: 'openai' },
          /listening on (http:\/\/[^\s"]+)/,
        );
        servers.add(server.child);
        try {
          const target = { origin: server.match, child: server.child, bearer: (await bearerOf?.(name, server.match)) ?? API_TOKEN };
          await load(target, warmup);
          runs[name].push(await load(target, duration));
        } finally {
          await stop(server.child);
          servers.delete(server.child);
        }
      }
      process.stdout.write(`round ${round + 1}: ${names.map((name) => `${name} ${runs[name][round].cpu.toFixed(0)}`).join(', ')} us/req\n`);
    }
    const width = Math.max(...names.map((name) => name.length)) + 2;
    process.stdout.write(`\n${'variant'.padEnd(width)}   req/s  CPU us/req  vs ${baseline} (median of per-round ratios)\n`);
    for (const name of names) {
      const ratios = runs[name].map((run, i) => run.cpu / runs[baseline][i].cpu);
      process.stdout.write(
        `${name.padEnd(width)} ${median(runs[name].map((r) => r.rps)).toFixed(0).padStart(7)} ${median(runs[name].map((r) => r.cpu)).toFixed(0).padStart(11)}  ` +
          `${name === baseline ? '' : `${(100 * (median(ratios) - 1)).toFixed(1).padStart(6)}% (rounds ${ratios.map((r) => `${(100 * (r - 1)).toFixed(1)}%`).join(' ')})`}\n`,
      );
    }
  } finally {
    await Promise.all([...servers].map(stop));
    await stop(emulator.child);
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

module.exports = { ROOT, chatCpuSettings, compareChatCpu, cpuMicros, openAiScenarios, scenarios, start, startServers, stop, throughput };
