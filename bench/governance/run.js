'use strict';
// bench/governance: what each part of governance costs the chat path, in CPU time per request. One Tollgate
// process per variant, each on the OpenAI emulator: none (shared API token, ledger off), ledger (shared token,
// memory ledger), key (an API key, ledger off, no budget), key+budget (an API key and a key budget reserved and
// settled on every call) and governed (all three, bench:compare's `governed` target). Interleaved rounds whose
// order rotates, each variant in a fresh process every round; each variant's CPU per request is divided by the
// plain one of the same round, and the medians of those ratios are printed (compareChatCpu in the harness).
// Usage: npm run build && node bench/governance/run.js
//   (env: CONNECTIONS=10 DURATION=5 ROUNDS=5 WARMUP=2 ROUTE=chat|stream VARIANTS=ledger,governed GOVERNANCE_STORE=memory|redis
//    REDIS_URL=redis://127.0.0.1:6379)
const { chatCpuSettings, compareChatCpu } = require('../gateway/harness');
const { NAMES: ALL, STORE, VARIANTS, configYaml, createKey } = require('./variants');

/** VARIANTS=none,governed measures only those (none, the baseline, always). */
const NAMES = process.env.VARIANTS ? ['none', ...process.env.VARIANTS.split(',').filter((name) => name !== 'none')] : ALL;
const unknown = NAMES.filter((name) => !ALL.includes(name));
if (unknown.length) throw new Error(`unknown variant ${unknown.join(', ')} (${ALL.join(', ')})`);

const settings = chatCpuSettings();
compareChatCpu({
  heading: `bench/governance: /openai/v1/chat/completions${settings.stream ? ' (stream)' : ''}, ${STORE} stores`,
  configs: Object.fromEntries(NAMES.map((name) => [name, configYaml(VARIANTS[name])])),
  settings,
  bearerOf: async (name, origin) => (VARIANTS[name].key ? createKey(origin) : undefined),
}).catch((error) => {
  process.stderr.write(`bench/governance: ${error.message}\n`);
  process.exit(1);
});
