'use strict';
// bench/deployments/choose.js: the CPU a deployment choice adds to one model call (issue 30: at most 2 µs).
// In one process, interleaved rounds of the same AiClient call (generateMessages) on an in-process provider that
// answers at once, so the client's own path is all that runs: (1) a plain model, (2) an alias of one target,
// (3) an alias with two deployments under each strategy. Prints CPU µs per call (process.cpuUsage, user + system)
// as the median over rounds, and each variant's difference to the plain model in the same round.
// BASELINE_DIST=<another checkout's dist/> adds its plain model and one-target alias to the same rounds, so the
// single-deployment path of this build is compared with an earlier build's.
// Usage: npm run build && node bench/deployments/choose.js   (env: ROUNDS=9 CALLS=20000 BASELINE_DIST=)
const path = require('node:path');

function load(dist) {
  const ai = path.join(path.resolve(dist), 'src', 'ai');
  return {
    AiClient: require(path.join(ai, 'client', 'ai-client')).AiClient,
    ProviderRegistry: require(path.join(ai, 'client', 'provider-registry')).ProviderRegistry,
    DEFAULT_PROMPT_TEMPLATES: require(path.join(ai, 'prompts', 'prompt-templates')).DEFAULT_PROMPT_TEMPLATES,
  };
}
const current = load(path.join(__dirname, '..', '..', 'dist'));
const baseline = process.env.BASELINE_DIST ? load(process.env.BASELINE_DIST) : undefined;

const ROUNDS = Number(process.env.ROUNDS || 9);
const CALLS = Number(process.env.CALLS || 20000);

/** A provider that answers at once: the client's path, without any I/O. */
function instantProvider(name) {
  return {
    name,
    kind: 'openai_compatible',
    capabilities: { generate: true, embeddings: false, streaming: false, listModels: false, tools: true, vision: true, structuredOutput: true },
    describe: () => ({ name, kind: 'openai_compatible', chatModel: 'm' }),
    generate: async (request) => ({ text: 'ok', model: request.model ?? 'm', usage: { inputTokens: 3, outputTokens: 1 } }),
    embed: async () => {
      throw new Error('not offered');
    },
    listModels: async () => [],
    healthCheck: async () => ({ provider: name, status: 'healthy', reachable: true, ready: true, latencyMs: 0 }),
    close: async () => undefined,
  };
}

function client(aliases, build = current) {
  const { AiClient, ProviderRegistry, DEFAULT_PROMPT_TEMPLATES } = build;
  return new AiClient(new ProviderRegistry([instantProvider('a'), instantProvider('b')]), {
    defaultProvider: 'a',
    retry: { retries: 0, baseDelayMs: 1 },
    fallback: { enabled: true },
    modelAliases: aliases,
    prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
    context: { excludedFields: [], sensitiveKeys: [] },
    sensitiveKeys: [],
    limits: { maxBatchInputs: 4 },
    healthCacheMs: 5000,
  });
}

const strategies = ['ordered', 'weighted', 'least-busy', 'lowest-latency'];
const variants = [
  { name: 'plain model (a/m)', model: 'a/m', client: client({}) },
  { name: 'alias, one target', model: 'one', client: client({ one: ['a/m'] }) },
  ...(baseline
    ? [
        { name: 'baseline: plain model', model: 'a/m', client: client({}, baseline) },
        { name: 'baseline: alias, one target', model: 'one', client: client({ one: ['a/m'] }, baseline) },
      ]
    : []),
  ...strategies.map((strategy) => ({
    name: `2 deployments, ${strategy}`,
    model: 'spread',
    client: client({ spread: { strategy, deployments: ['a/m', { target: 'b/m', weight: 2, rpm: 1e9 }] } }),
  })),
];
const messages = [{ role: 'user', content: 'hi' }];

async function cpuPerCall(variant) {
  const options = { model: variant.model };
  const start = process.cpuUsage();
  for (let call = 0; call < CALLS; call++) await variant.client.generateMessages(messages, options);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

async function main() {
  for (const variant of variants) await cpuPerCall(variant); // warm-up
  const figures = new Map(variants.map((variant) => [variant.name, { cpu: [], added: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts at another variant, so none always runs first (after the previous round's last).
    const measured = new Map();
    for (let step = 0; step < variants.length; step++) {
      const variant = variants[(round + step) % variants.length];
      measured.set(variant.name, await cpuPerCall(variant));
    }
    const plain = measured.get(variants[0].name);
    for (const [name, cpu] of measured) {
      figures.get(name).cpu.push(cpu);
      figures.get(name).added.push(cpu - plain);
    }
  }
  console.log(`node ${process.version}, ${ROUNDS} rounds of ${CALLS} calls per variant, load ${require('node:os').loadavg()[0].toFixed(1)}`);
  console.log('variant                          CPU µs/call   added vs plain (median of per-round differences)');
  for (const [name, { cpu, added }] of figures) {
    console.log(`${name.padEnd(32)} ${median(cpu).toFixed(2).padStart(11)}   ${median(added) >= 0 ? '+' : ''}${median(added).toFixed(2)}`);
  }
  await Promise.all(variants.map((variant) => variant.client.close()));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
