'use strict';
// bench/gateway/profile.js: where the gateway's CPU time goes under load. Starts the OpenAI emulator and the
// built server with --cpu-prof, loads one /v1 route with autocannon, stops the server with SIGTERM (V8 writes
// the profile on a clean exit only) and prints self time per function and per area for the load window alone
// (start-up excluded), in % of the sampled time and in microseconds per request. The .cpuprofile it names
// opens as a flame graph in Chrome DevTools (Performance > Load profile) or https://www.speedscope.app.
// Usage: npm run build && node bench/gateway/profile.js [generate|embeddings|openai-chat|openai-chat-stream|
//   openai-responses|openai-responses-stream|anthropic-messages|anthropic-messages-stream]
//   (env: DURATION=8 CONNECTIONS=10 TOP=30 OUT=<directory for the .cpuprofile, default a new temp dir>
//    VARIANT=<a governance variant of bench/governance/variants.js: none, ledger, key, key+budget, governed>;
//    without it, Tollgate's defaults with the shared API token)
const autocannon = require('autocannon');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { openAiScenarios, scenarios, startServers, stop } = require('./harness');
const { VARIANTS, configYaml, createKey } = require('../governance/variants');

const DURATION = Number(process.env.DURATION || 8);
const CONNECTIONS = Number(process.env.CONNECTIONS || 10);
const TOP = Number(process.env.TOP || 30);

/** Microseconds on the clock V8 stamps profiles with (CLOCK_MONOTONIC, like process.hrtime). */
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

/**
 * `file:///.../node_modules/@nestjs/core/x.js` -> `@nestjs/core/x.js`, keeping nested node_modules in view
 * (a package's private copy of a dependency is not the hoisted one); project files relative to the root.
 */
function shortUrl(url, root) {
  const file = url.replace(/^file:\/\//, '');
  const inModules = file.indexOf('/node_modules/');
  if (inModules >= 0) return file.slice(inModules + '/node_modules/'.length);
  return file.startsWith(root) ? file.slice(root.length + 1) : file;
}

const packageName = (file) => {
  const parts = file.split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
};

/** The npm package, `node:` internals, the project file, or the V8 pseudo-frame a function belongs to. */
function areaOf(frame, root) {
  if (frame.url === '') return frame.functionName.startsWith('(') ? frame.functionName : `(native ${frame.functionName})`;
  if (frame.url.startsWith('node:')) return 'node: internals';
  if (!frame.url.includes('/node_modules/')) return shortUrl(frame.url, root);
  const chain = shortUrl(frame.url, root).split('/node_modules/');
  const own = packageName(chain[chain.length - 1]);
  return chain.length === 1 ? `npm ${own}` : `npm ${own} (the copy nested in ${packageName(chain[0])})`;
}

function summarize(profile, window, requests, root) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map();
  const byArea = new Map();
  let total = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < window.from || at > window.to) return;
    total += delta;
    const frame = nodes.get(id).callFrame;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url ? `${shortUrl(frame.url, root)}:${frame.lineNumber + 1}` : ''}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
    const area = areaOf(frame, root);
    byArea.set(area, (byArea.get(area) ?? 0) + delta);
  });
  const table = (title, entries, limit) => {
    const lines = [...entries].sort((a, b) => b[1] - a[1]).slice(0, limit);
    return [
      `${title}`,
      '     %   us/req',
      ...lines.map(([name, time]) => `${((100 * time) / total).toFixed(1).padStart(6)} ${(time / requests).toFixed(1).padStart(8)}  ${name}`),
    ].join('\n');
  };
  return `sampled ${(total / 1e3).toFixed(0)} ms over ${requests} requests: ${(total / requests).toFixed(0)} us per request\n\n` +
    `${table('by area (self time)', byArea, 25)}\n\n${table(`top ${TOP} functions (self time)`, byFunction, TOP)}\n`;
}

async function main() {
  const route = process.argv[2] ?? 'generate';
  const out = process.env.OUT ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-profile-'));
  fs.mkdirSync(out, { recursive: true });
  const before = new Set(fs.readdirSync(out));
  const variant = process.env.VARIANT === undefined ? undefined : VARIANTS[process.env.VARIANT];
  if (process.env.VARIANT !== undefined && !variant) throw new Error(`unknown VARIANT ${process.env.VARIANT} (${Object.keys(VARIANTS).join(', ')})`);
  let config;
  if (variant) {
    config = path.join(out, 'governance.yaml');
    fs.writeFileSync(config, configYaml(variant));
  }
  const { emulator, gateway } = await startServers(['--cpu-prof', `--cpu-prof-dir=${out}`], config ? { TOLLGATE_CONFIG: config, TOLLGATE_DEFAULT_PROVIDER: 'openai' } : {});
  let window;
  let requests;
  try {
    const bearer = variant?.key ? await createKey(gateway.match) : undefined;
    const scenario = [...scenarios(emulator.match, gateway.match), ...openAiScenarios(gateway.match, bearer)].find((s) => s.name === route);
    if (!scenario) throw new Error(`unknown route ${route} (generate, embeddings, openai-chat or openai-chat-stream)`);
    const load = (duration) =>
      autocannon({ url: gateway.match + scenario.gateway.path, method: 'POST', headers: scenario.gateway.headers, body: scenario.gateway.body, connections: CONNECTIONS, duration });
    // Warm-up outside the window: JIT and connection pools.
    await load(2);
    const from = monotonicMicros();
    const result = await load(DURATION);
    window = { from, to: monotonicMicros() };
    requests = result.requests.total;
    if (result.non2xx + result.errors > 0) throw new Error(`${result.non2xx + result.errors} failed requests`);
    process.stdout.write(`bench/gateway/profile: ${scenario.gateway.path}${route.endsWith('-stream') ? ' (stream)' : ''}, ${CONNECTIONS} connections x ${DURATION} s, ${result.requests.average.toFixed(0)} req/s\n`);
  } finally {
    await Promise.all([stop(gateway.child), stop(emulator.child)]);
  }
  const file = fs.readdirSync(out).find((name) => name.endsWith('.cpuprofile') && !before.has(name));
  if (!file) throw new Error(`no .cpuprofile was written to ${out}`);
  const profile = JSON.parse(fs.readFileSync(path.join(out, file), 'utf8'));
  process.stdout.write(`profile: ${path.join(out, file)}\n${summarize(profile, window, requests, path.resolve(__dirname, '..', '..'))}`);
}

main().catch((error) => {
  process.stderr.write(`bench/gateway/profile: ${error.message}\n`);
  process.exit(1);
});
