/**
 * The cost of one reserve + settle of the budget engine, on memory and on Redis (REDIS_URL, default
 * 127.0.0.1:6379), for a typical request's scopes: a tenant's monthly budget, the key's daily budget and the
 * key's RPM/TPM (three counters). Runs the built engine (dist/): `npm run build` first.
 *
 * - sequential: one call at a time, mean wall time per reserve + settle (two round trips on Redis);
 * - concurrent: CONCURRENCY calls in flight, calls per second, and CPU time of this process per call.
 * Knobs: CALLS=20000 (memory: ten times as many) CONCURRENCY=50 ROUNDS=3. The counters live under a
 * prefix of their own and are deleted at the end.
 */
const { join } = require('node:path');
const { randomUUID } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const Redis = require('ioredis');

const dist = join(__dirname, '..', '..', 'dist', 'src', 'governance', 'budgets');
const { CountingBudgetEngine } = require(join(dist, 'budget-engine.js'));
const { MemoryCounterStore } = require(join(dist, 'memory-counter-store.js'));
const { RedisCounterStore } = require(join(dist, 'redis-counter-store.js'));

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CALLS = Number(process.env.CALLS ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PREFIX = `tollgate:bench-budgets:${randomUUID()}:`;

/** Limits no bench run reaches, so every call is granted and does the full work. */
const SCOPES = [
  { kind: 'tenant', id: 't-1', period: 'month', limit: { micros: 1e15 } },
  { kind: 'key', id: 'k-1', period: 'day', limit: { micros: 1e15, tokens: 1e15 } },
  { kind: 'key', id: 'k-1', period: 'minute', limit: { requests: 1e12, tokens: 1e15 } },
];
const ESTIMATE = { micros: 3_000, tokens: 1_200 };
const ACTUAL = { micros: 2_100, tokens: 870 };

async function oneCall(engine) {
  const reservation = await engine.reserve(SCOPES, ESTIMATE);
  await engine.settle(reservation, ACTUAL);
}

async function sequential(engine, calls) {
  const started = performance.now();
  for (let call = 0; call < calls; call++) await oneCall(engine);
  return ((performance.now() - started) * 1000) / calls;
}

async function concurrent(engine, calls) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next++ < calls) await oneCall(engine);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { perSecond: calls / seconds, cpuMicrosPerCall: (used.user + used.system) / calls };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function measure(name, engine, calls) {
  await sequential(engine, Math.min(calls, 2_000)); // warm-up: JIT, script load, connection
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push({ sequentialMicros: await sequential(engine, calls), ...(await concurrent(engine, calls)) });
  const row = {
    store: name,
    'µs per reserve+settle (sequential)': median(rounds.map((r) => r.sequentialMicros)).toFixed(1),
    [`calls/s (${CONCURRENCY} in flight)`]: Math.round(median(rounds.map((r) => r.perSecond))),
    'CPU µs per call (this process)': median(rounds.map((r) => r.cpuMicrosPerCall)).toFixed(1),
  };
  await engine.close();
  return row;
}

async function main() {
  const rows = [];
  rows.push(await measure('memory', new CountingBudgetEngine(new MemoryCounterStore(), PREFIX), CALLS * 10));
  const redisStore = new RedisCounterStore(REDIS_URL);
  await redisStore.connect();
  rows.push(await measure('redis', new CountingBudgetEngine(redisStore, PREFIX), CALLS));
  console.table(rows);
  console.log(`node ${process.version}, ${SCOPES.length} counters per call, ${ROUNDS} rounds (median), load average ${require('node:os').loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
