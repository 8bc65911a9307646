'use strict';
// bench/governance/instructions.js: the chat path's instructions per request for each governance variant of
// bench/governance (variants.js), counted by valgrind's callgrind as bench/tracing/instructions.js counts tracing:
// REQUESTS sequential requests through inject() (bench/tracing/inject-cpu.js) with counting on for them only.
// Independent of the machine's load, unlike the CPU clock; what it leaves out is the kernel's side of the
// sockets (Redis's round trips are made for real, their system calls are not counted).
// Usage: npm run build && GOVERNANCE_STORE=redis node bench/governance/instructions.js
//   (env: REQUESTS=300 WARMUP_REQUESTS=200 ROUTE=chat|stream VARIANTS=key+budget,governed GOVERNANCE_STORE=memory|redis)
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, start, stop } = require('../gateway/harness');
const { injectInstructions } = require('../in-process-cpu');
const { ADMIN_TOKEN, NAMES: ALL, STORE, VARIANTS, configYaml } = require('./variants');

const REQUESTS = Number(process.env.REQUESTS || 300);
const API_KEY = 'sk-bench-upstream';
const NAMES = process.env.VARIANTS ? ['none', ...process.env.VARIANTS.split(',').filter((name) => name !== 'none')] : ALL;

async function main() {
  const emulator = await start([path.join(ROOT, 'bench', 'gateway', 'emulator-process.js')], { BENCH_API_KEY: API_KEY }, /ready (\S+)/);
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-governance-instructions-'));
  try {
    process.stdout.write(
      `bench/governance/instructions: /openai/v1/chat/completions${process.env.ROUTE === 'stream' ? ' (stream)' : ''} through inject() under callgrind, ` +
        `${STORE} stores, Node ${process.version}, ${REQUESTS} requests, load average ${os.loadavg()[0].toFixed(1)}\n`,
    );
    const perRequest = {};
    for (const name of NAMES) {
      const file = path.join(configDir, `${name.replace('+', '-')}.yaml`);
      fs.writeFileSync(file, configYaml(VARIANTS[name]));
      const out = path.join(configDir, `callgrind.${name.replace('+', '-')}`);
      const env = {
        ...process.env,
        WARMUP_REQUESTS: process.env.WARMUP_REQUESTS || '200',
        REQUESTS: String(REQUESTS),
        CALLGRIND: '1',
        TOLLGATE_CONFIG: file,
        API_TOKEN: 'bench-api-token',
        ...(VARIANTS[name].key ? { ADMIN_TOKEN } : {}),
        OPENAI_API_KEY: API_KEY,
        OPENAI_URL: emulator.match,
        OPENAI_CHAT_MODEL: 'gpt-test',
        TOLLGATE_DEFAULT_PROVIDER: 'openai',
      };
      perRequest[name] = injectInstructions(env, configDir, out) / REQUESTS;
      process.stdout.write(`${name.padEnd(11)} ${Math.round(perRequest[name] / 1000)}k instructions/req (load average ${os.loadavg()[0].toFixed(1)})\n`);
    }
    for (const name of NAMES) if (name !== 'none') process.stdout.write(`${name} vs none: ${(100 * (perRequest[name] / perRequest.none - 1)).toFixed(1)}%\n`);
  } finally {
    await stop(emulator.child);
    fs.rmSync(configDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`bench/governance/instructions: ${error.message}\n`);
  process.exit(1);
});
