/**
 * The budget engine on real Redis (and on memory, the same contract): reserve all-or-none, settle and
 * release, window reset, and the case across two processes — 200 concurrent reserve calls for one key
 * whose budget covers exactly 50, from two node processes on one Redis: at most (here: exactly) 50 succeed.
 */
import { Logger } from '@nestjs/common';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Redis from 'ioredis';
import { CountingBudgetEngine, type OutputAllowance } from '../src/governance/budgets/budget-engine';
import { BudgetExceededError, BudgetStoreUnavailableError, RateLimitExceededError } from '../src/governance/budgets/budget-errors';
import type { MeteredScope, Usage } from '../src/governance/budgets/budget-scope';
import { MemoryCounterStore } from '../src/governance/budgets/memory-counter-store';
import { RedisCounterStore } from '../src/governance/budgets/redis-counter-store';
import { ROOT, buildDistIfStale } from './support/cli-run';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const run = randomUUID();
const prefix = `tollgate:test-budgets:${run}:`;

let redis: Redis;
beforeAll(() => {
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

type Clocked = { engine: CountingBudgetEngine; setNow(now: number): void; counter(key: string): Promise<Record<string, number> | undefined> };

const stores: [string, (keyPrefix: string) => Promise<Clocked>][] = [
  [
    'memory',
    async (keyPrefix) => {
      let now = Date.now();
      const store = new MemoryCounterStore(() => now);
      return {
        engine: new CountingBudgetEngine(store, keyPrefix, () => now),
        setNow: (value) => (now = value),
        counter: async (key) => store.read(key),
      };
    },
  ],
  [
    'redis',
    async (keyPrefix) => {
      let now = Date.now();
      const store = new RedisCounterStore(REDIS_URL);
      await store.connect();
      return {
        engine: new CountingBudgetEngine(store, keyPrefix, () => now),
        setNow: (value) => (now = value),
        counter: async (key) => {
          const hash = await redis.hgetall(key);
          if (Object.keys(hash).length === 0) return undefined;
          return { micros: Number(hash.m), tokens: Number(hash.t), requests: Number(hash.r) };
        },
      };
    },
  ],
];

describe.each(stores)('budget engine on %s', (name, create) => {
  let clocked: Clocked;
  let keyPrefix: string;
  beforeEach(async () => {
    keyPrefix = `${prefix}${name}:${randomUUID()}:`;
    clocked = await create(keyPrefix);
  });
  afterEach(() => clocked.engine.close());
  /** Memory answers synchronously and Redis with a promise; as a promise either way, a refusal is a rejection. */
  const reserve = async (scopes: readonly MeteredScope[], estimate: Usage, output?: OutputAllowance) => clocked.engine.reserve(scopes, estimate, output);

  const tenant: MeteredScope = { kind: 'tenant', id: 't-1', period: 'month', limit: { micros: 1_000 } };
  const key: MeteredScope = { kind: 'key', id: 'k-1', period: 'day', limit: { tokens: 100 } };
  const rate: MeteredScope = { kind: 'subject', id: 'u-1', period: 'minute', limit: { requests: 3, tokens: 50 } };

  it('reserves in all scopes or none, refusing with the scope over its limit and its reset time', async () => {
    const now = Date.parse('2030-01-31T12:00:00Z');
    clocked.setNow(now);
    await reserve([tenant, key], { micros: 600, tokens: 40 });
    const refused = await reserve([key, tenant], { micros: 600, tokens: 40 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BudgetExceededError);
    expect(refused).toMatchObject({ scope: { kind: 'tenant', id: 't-1' }, field: 'micros', resetAt: new Date('2030-02-01T00:00:00Z') });
    // The key's counter was checked first and would have fitted: it must not have been charged.
    expect(await clocked.counter(`${keyPrefix}c:day:2030-01-31:key:k-1`)).toEqual({ micros: 600, tokens: 40, requests: 1 });
  });

  it('settles to the actual cost and releases a call that was not made, keeping its request', async () => {
    const reservation = await reserve([tenant, key], { micros: 500, tokens: 90 });
    await clocked.engine.settle(reservation, { micros: 120, tokens: 7 });
    const released = await reserve([tenant, key], { micros: 800, tokens: 90 });
    await clocked.engine.release(released);
    const window = new Date().toISOString().slice(0, 10);
    expect(await clocked.counter(`${keyPrefix}c:day:${window}:key:k-1`)).toEqual({ micros: 120, tokens: 7, requests: 2 });
    // What the settle gave back can be spent again: 120 + 880 is exactly the budget.
    await reserve([tenant], { micros: 880, tokens: 0 });
    await expect(reserve([tenant], { micros: 1, tokens: 0 })).rejects.toBeInstanceOf(BudgetExceededError);
  });

  it('grants the output every counter covers (tokens, and dollars at the output price), charges exactly that, and refuses below the least', async () => {
    const window = new Date().toISOString().slice(0, 10);
    // Tenant: 1,000 micro-dollars; key: 100 tokens. 10 input tokens cost 30 micros; output at $2.5/M (2.5 micros a token).
    const output = { wanted: 1024, least: 16, picosPerToken: 2_500_000 };
    const first = await reserve([tenant, key], { micros: 30, tokens: 10 }, output);
    // The key's 90 tokens left bound it (the tenant's 970 micros would cover 388).
    expect(first).toMatchObject({ outputTokens: 90, estimate: { micros: 30 + 225, tokens: 100 } });
    expect(await clocked.counter(`${keyPrefix}c:day:${window}:key:k-1`)).toEqual({ micros: 255, tokens: 100, requests: 1 });
    await clocked.engine.settle(first, { micros: 30, tokens: 10 });
    // Without the key, the tenant's 970 micros left bound it: (970 - 30) / 2.5 = 376 tokens.
    const second = await reserve([tenant], { micros: 30, tokens: 10 }, output);
    expect(second).toMatchObject({ outputTokens: 376, estimate: { micros: 30 + 940, tokens: 386 } });
    // 1,000 micros spent: nothing is left, not even for the least output.
    const refused = await reserve([tenant], { micros: 0, tokens: 0 }, output).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BudgetExceededError);
    expect((refused as Error).message).toMatch(/^The monthly budget of tenant t-1 \(\$0\.001000\) is spent/);
    await clocked.engine.release(second);
    // 970 micros left, less than 30 + 16 x 2.5 would need when the input alone costs 940: refused by the estimate.
    const byEstimate = await reserve([tenant], { micros: 940, tokens: 0 }, output).catch((error: unknown) => error);
    expect((byEstimate as Error).message).toMatch(/^This call's estimate \(\$0\.000980\) is more than the \$0\.000970 left of the monthly budget of tenant t-1/);
  });

  it('never grants more than is left when many bounded reserves race', async () => {
    const budget: MeteredScope = { kind: 'key', id: 'k-race', period: 'day', limit: { tokens: 5_000 } };
    const output = { wanted: 1024, least: 16, picosPerToken: 0 };
    const answers = await Promise.allSettled(Array.from({ length: 40 }, () => reserve([budget], { micros: 0, tokens: 100 }, output)));
    const granted = answers.filter((answer) => answer.status === 'fulfilled').map((answer) => (answer as PromiseFulfilledResult<{ estimate: Usage }>).value.estimate.tokens);
    expect(granted.reduce((sum, tokens) => sum + tokens, 0)).toBeLessThanOrEqual(5_000);
    // The last admitted call took what was left down to less than 100 input and 16 output.
    expect(granted.reduce((sum, tokens) => sum + tokens, 0)).toBeGreaterThan(5_000 - 116);
    const window = new Date().toISOString().slice(0, 10);
    expect((await clocked.counter(`${keyPrefix}c:day:${window}:key:k-race`))?.tokens).toBe(granted.reduce((sum, tokens) => sum + tokens, 0));
  });

  it('counts afresh in the next window', async () => {
    const lastMinute = Date.parse('2031-03-31T23:59:30Z');
    clocked.setNow(lastMinute);
    for (let call = 0; call < 3; call++) await reserve([rate], { micros: 0, tokens: 10 });
    await expect(reserve([rate], { micros: 0, tokens: 10 })).rejects.toMatchObject({
      constructor: RateLimitExceededError,
      field: 'requests',
      resetAt: new Date('2031-04-01T00:00:00Z'),
    });
    clocked.setNow(Date.parse('2031-04-01T00:00:00Z'));
    await reserve([rate], { micros: 0, tokens: 50 });
    await expect(reserve([rate], { micros: 0, tokens: 1 })).rejects.toMatchObject({ field: 'tokens' });
  });
});

describe('budget engine on Redis', () => {
  // A script's first run on a connection is EVAL (EVALSHA answered NOSCRIPT, a rejected call); later ones EVALSHA.
  const scriptCalls = async () => {
    const stats = await redis.info('commandstats');
    return ['eval', 'evalsha'].reduce((sum, command) => sum + Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0), 0);
  };

  it('writes the settles of one turn of the event loop as one command, summed per counter', async () => {
    const store = new RedisCounterStore(REDIS_URL);
    await store.connect();
    const engine = new CountingBudgetEngine(store, `${prefix}coalesce:`);
    try {
      const scopes = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 1_000 } }] as const;
      const reservations = [];
      for (let call = 0; call < 5; call++) reservations.push(await engine.reserve(scopes, { micros: 0, tokens: 100 }));
      const before = await scriptCalls();
      await Promise.all(reservations.map((reservation, call) => engine.settle(reservation, { micros: 0, tokens: 10 * call })));
      expect((await scriptCalls()) - before).toBe(1);
      const [key] = await redis.keys(`${prefix}coalesce:*`);
      expect(await redis.hgetall(key)).toEqual({ m: '0', t: String(0 + 10 + 20 + 30 + 40), r: '5' });
    } finally {
      await engine.close();
    }
  });

  it('sends the reserves and settles of one turn as one script call, answering the reserves in the order they were made', async () => {
    const store = new RedisCounterStore(REDIS_URL);
    await store.connect();
    const engine = new CountingBudgetEngine(store, `${prefix}turn:`);
    try {
      const scopes = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 1_000 } }] as const;
      const first = await engine.reserve(scopes, { micros: 0, tokens: 300 });
      const before = await scriptCalls();
      // One turn: the settle gives back 200 of the first call's 300, then ten reserves of 100 meet 900 left.
      const settled = engine.settle(first, { micros: 0, tokens: 100 });
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () => Promise.resolve(engine.reserve(scopes, { micros: 0, tokens: 100 })).then(() => 'granted', (error: Error) => error.constructor.name)),
      );
      await settled;
      expect((await scriptCalls()) - before).toBe(1);
      expect(outcomes).toEqual([...Array(9).fill('granted'), 'BudgetExceededError']);
      const [key] = await redis.keys(`${prefix}turn:*`);
      expect(await redis.hgetall(key)).toEqual({ m: '0', t: '1000', r: '10' });
    } finally {
      await engine.close();
    }
  });

  it('sends what is made while a script call is on its way as the next single call, in the order made', async () => {
    const store = new RedisCounterStore(REDIS_URL);
    await store.connect();
    const engine = new CountingBudgetEngine(store, `${prefix}group:`);
    try {
      const scopes = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 1_000 } }] as const;
      await engine.release(await engine.reserve(scopes, { micros: 0, tokens: 1 }));
      await new Promise((turnEnded) => setImmediate(turnEnded));
      const before = await scriptCalls();
      // Redis holds every client's commands for 300 ms, so the first call stays on its way while five more turns pass.
      await redis.client('PAUSE', 300, 'ALL');
      const outcome = (reserved: Promise<unknown>) => reserved.then(() => 'granted', (error: Error) => error.constructor.name);
      const outcomes = [outcome(Promise.resolve(engine.reserve(scopes, { micros: 0, tokens: 600 })))];
      for (let turn = 0; turn < 5; turn++) {
        await new Promise((turnEnded) => setImmediate(turnEnded));
        outcomes.push(outcome(Promise.resolve(engine.reserve(scopes, { micros: 0, tokens: 100 }))));
      }
      expect(await Promise.all(outcomes)).toEqual(['granted', 'granted', 'granted', 'granted', 'granted', 'BudgetExceededError']);
      expect((await scriptCalls()) - before).toBe(2);
    } finally {
      await engine.close();
    }
  });

  it('fails closed on a counter it cannot read, without charging that reserve or failing the others of its turn', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const store = new RedisCounterStore(REDIS_URL);
    await store.connect();
    const engine = new CountingBudgetEngine(store, `${prefix}wrongtype:`);
    try {
      // Limits too small for a lease (D10), so every reserve of the broken plan reads its counters.
      const broken = [{ kind: 'key', id: 'broken', period: 'day', limit: { tokens: 100 } }, { kind: 'tenant', id: 't', period: 'day', limit: { tokens: 100 } }] as const;
      const sound = [{ kind: 'key', id: 'sound', period: 'day', limit: { tokens: 1_000 } }] as const;
      // Plan a reserve first to learn the broken counter's key, then put a string where its hash belongs.
      const planned = await engine.reserve(broken, { micros: 0, tokens: 1 });
      await engine.release(planned);
      await new Promise((turnEnded) => setImmediate(turnEnded));
      const brokenKey = planned.keys[1];
      await redis.del(brokenKey);
      await redis.set(brokenKey, 'not a hash');
      const [refused, granted] = await Promise.allSettled([engine.reserve(broken, { micros: 0, tokens: 5 }), engine.reserve(sound, { micros: 0, tokens: 5 })]);
      expect(refused).toMatchObject({ status: 'rejected', reason: expect.any(BudgetStoreUnavailableError) });
      expect(granted).toMatchObject({ status: 'fulfilled' });
      expect(await redis.hgetall(planned.keys[0])).toEqual({ m: '0', t: '0', r: '1' });
      expect(String(logged.mock.calls[0]?.[0])).toMatch(/^budget store unavailable \(ReplyError WRONGTYPE\)/);
    } finally {
      logged.mockRestore();
      await engine.close();
    }
  });

  it('finishes the settle writes on their way before it disconnects', async () => {
    const store = new RedisCounterStore(REDIS_URL);
    await store.connect();
    const engine = new CountingBudgetEngine(store, `${prefix}close:`);
    const reservation = await engine.reserve([{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 1_000 } }], { micros: 0, tokens: 100 });
    const settled = engine.settle(reservation, { micros: 0, tokens: 7 });
    // The turn ends and the write is sent; close comes while Redis has not answered it yet.
    await new Promise((turnEnded) => setImmediate(turnEnded));
    await engine.close();
    await settled;
    const [key] = await redis.keys(`${prefix}close:*`);
    expect(await redis.hget(key, 't')).toBe('7');
  });

  it('sets counters to expire when their window ends', async () => {
    const store = new RedisCounterStore(REDIS_URL);
    await store.connect();
    const engine = new CountingBudgetEngine(store, `${prefix}ttl:`);
    try {
      await engine.reserve([{ kind: 'tenant', id: 't', period: 'day', limit: { micros: 10 } }], { micros: 1, tokens: 0 });
      const [key] = await redis.keys(`${prefix}ttl:*`);
      const expiresAt = Date.now() + (await redis.pttl(key));
      const dayEnd = new Date();
      dayEnd.setUTCHours(24, 0, 0, 0);
      expect(Math.abs(expiresAt - dayEnd.getTime())).toBeLessThan(5_000);
    } finally {
      await engine.close();
    }
  });

  describe('leases (D10)', () => {
    const counterOf = async (key: string) => redis.hgetall(key);

    it('serves a caller far from its limits from a lease without a round trip, and returns what it did not spend', async () => {
      const store = new RedisCounterStore(REDIS_URL);
      await store.connect();
      const engine = new CountingBudgetEngine(store, `${prefix}lease:`);
      const scopes = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 1_000_000 } }] as const;
      const first = engine.reserve(scopes, { micros: 0, tokens: 100 });
      expect(first).toBeInstanceOf(Promise);
      const reservation = await first;
      // The first call took a lease of 32 calls of its size as well as its own 100 tokens.
      const [key] = reservation.keys;
      expect(await counterOf(key)).toMatchObject({ t: String(100 + 32 * 100), r: String(1 + 32), l: '1' });
      const second = engine.reserve(scopes, { micros: 0, tokens: 100 });
      expect(second).not.toBeInstanceOf(Promise);
      // Its refund stays in the lease: Redis still holds the whole lease.
      await engine.settle(second as Awaited<typeof first>, { micros: 0, tokens: 10 });
      await engine.settle(reservation, { micros: 0, tokens: 40 });
      await engine.close();
      // Closed: the lease went back, leaving exactly what was spent.
      expect(await counterOf(key)).toMatchObject({ m: '0', t: '50', r: '2', l: '0' });
    });

    it('grants no lease on a counter near its limit', async () => {
      const store = new RedisCounterStore(REDIS_URL);
      await store.connect();
      const engine = new CountingBudgetEngine(store, `${prefix}nolease:`);
      try {
        // 32 calls of 100 and four more leases of them (16,000 tokens) do not fit in 15,000.
        const scopes = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 15_000 } }] as const;
        const reservation = await engine.reserve(scopes, { micros: 0, tokens: 100 });
        const second = engine.reserve(scopes, { micros: 0, tokens: 100 });
        expect(second).toBeInstanceOf(Promise);
        await second;
        expect(await counterOf(reservation.keys[0])).toEqual({ m: '0', t: '200', r: '2' });
      } finally {
        await engine.close();
      }
    });

    it('gives back a lease granted while it closes, leaving exactly what was spent', async () => {
      const store = new RedisCounterStore(REDIS_URL);
      await store.connect();
      const engine = new CountingBudgetEngine(store, `${prefix}closing:`);
      const reserved = Promise.resolve(engine.reserve([{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 1_000_000 } }], { micros: 0, tokens: 100 }));
      // The script call taking the lease is on its way when close begins.
      await new Promise((turnEnded) => setImmediate(turnEnded));
      await engine.close();
      const { keys } = await reserved;
      expect(await counterOf(keys[0])).toMatchObject({ t: '100', r: '1', l: '0' });
    });

    it('spends no lease under other limits than those it was granted for', async () => {
      const store = new RedisCounterStore(REDIS_URL);
      await store.connect();
      const engine = new CountingBudgetEngine(store, `${prefix}limits:`);
      try {
        const generous = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 1_000_000 } }] as const;
        const strict = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 500 } }] as const;
        const { keys } = await engine.reserve(generous, { micros: 0, tokens: 100 });
        // Same counter, a run-time rule's lower limit: each call goes to Redis (the lease goes back with the
        // first), and the counter's 100 tokens leave room for exactly four more.
        let granted = 0;
        for (;;) {
          const reserved = engine.reserve(strict, { micros: 0, tokens: 100 });
          expect(reserved).toBeInstanceOf(Promise);
          const outcome = await Promise.resolve(reserved).then(() => 'granted', (error: Error) => error);
          if (outcome !== 'granted') {
            expect(outcome).toBeInstanceOf(BudgetExceededError);
            break;
          }
          granted += 1;
        }
        expect(granted).toBe(4);
        expect(await counterOf(keys[0])).toMatchObject({ t: '500', r: '5', l: '0' });
      } finally {
        await engine.close();
      }
    });

    it('decides a call held back by a lease count that never comes down within a lease time and the grace', async () => {
      const store = new RedisCounterStore(REDIS_URL);
      await store.connect();
      const engine = new CountingBudgetEngine(store, `${prefix}stuck:`);
      const scopes = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 1_000 } }] as const;
      try {
        const first = await engine.reserve(scopes, { micros: 0, tokens: 900 });
        // A lease whose return was lost: the count stays up, its end long past.
        await redis.hset(first.keys[0], 'l', 1, 'le', Date.now());
        const started = performance.now();
        await expect(Promise.resolve(engine.reserve(scopes, { micros: 0, tokens: 200 }))).rejects.toBeInstanceOf(BudgetExceededError);
        const waited = performance.now() - started;
        expect(waited).toBeGreaterThan(4_000);
        expect(waited).toBeLessThan(7_000);
      } finally {
        await engine.close();
      }
    }, 15_000);

    it('holds a refusal back until another process has returned its lease, then grants exactly what the budget covers', async () => {
      const stores = [new RedisCounterStore(REDIS_URL), new RedisCounterStore(REDIS_URL)];
      await Promise.all(stores.map((store) => store.connect()));
      const [holder, spender] = stores.map((store) => new CountingBudgetEngine(store, `${prefix}wait:`));
      const scopes = [{ kind: 'key', id: 'k', period: 'day', limit: { tokens: 100_000 } }] as const;
      try {
        // The holder takes a lease of 3,200 tokens and leaves it unspent.
        const held = await holder.reserve(scopes, { micros: 0, tokens: 100 });
        let granted = 0;
        let refusal: unknown;
        const started = performance.now();
        while (!refusal) {
          try {
            await spender.reserve(scopes, { micros: 0, tokens: 100 });
            granted += 1;
          } catch (error) {
            refusal = error;
          }
        }
        expect(refusal).toBeInstanceOf(BudgetExceededError);
        // 100,000 tokens are 1,000 calls: the holder's one and every other call of the spender, once the
        // holder's unspent lease came back (its time is 250 ms).
        expect(granted).toBe(999);
        expect(performance.now() - started).toBeGreaterThan(100);
        const counter = await counterOf(held.keys[0]);
        expect(Number(counter.t)).toBeGreaterThanOrEqual(100_000);
      } finally {
        await Promise.all([holder.close(), spender.close()]);
      }
      const [key] = await redis.keys(`${prefix}wait:*`);
      expect(await counterOf(key)).toMatchObject({ t: '100000', r: '1000', l: '0' });
    }, 30_000);
  });

  it('fails closed when Redis does not answer, logging the failure without the URL', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const store = new RedisCounterStore('redis://user:hunter2@127.0.0.1:1');
    await store.connect();
    const engine = new CountingBudgetEngine(store, `${prefix}down:`);
    try {
      await expect(engine.reserve([{ kind: 'tenant', id: 't', period: 'day', limit: { micros: 10 } }], { micros: 1, tokens: 0 })).rejects.toBeInstanceOf(
        BudgetStoreUnavailableError,
      );
      expect(logged).toHaveBeenCalledTimes(1);
      expect(String(logged.mock.calls[0][0])).toMatch(/^budget store unavailable \(/);
      expect(String(logged.mock.calls[0][0])).not.toContain('hunter2');
    } finally {
      logged.mockRestore();
      await engine.close();
    }
  });
});

describe('two processes on one Redis', () => {
  const children = new Set<ChildProcess>();
  beforeAll(() => buildDistIfStale(), 180_000);
  afterAll(() => {
    for (const child of children) child.kill();
  });

  function startWorker(keyPrefix: string, keyId: string, budget: number, estimate: number, calls: number, loops?: number) {
    const args = [REDIS_URL, keyPrefix, keyId, String(budget), String(estimate), String(calls), ...(loops ? [String(loops)] : [])];
    const child = spawn(process.execPath, [join(ROOT, 'test', 'support', 'budget-reserve-worker.js'), ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(child);
    let output = '';
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.startsWith('ready\n')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${errors}`)));
    });
    const result = new Promise<{ granted: number; refused: number; other: string[]; immediate: number }>((resolve, reject) => {
      child.on('exit', (code) => {
        children.delete(child);
        if (code !== 0) reject(new Error(`worker exited with ${code}: ${errors}`));
        else resolve(JSON.parse(output.split('\n')[1]));
      });
    });
    return { ready, go: () => child.stdin.end('go\n'), result };
  }

  it('grants at most 50 of 200 concurrent reserve calls when the budget covers exactly 50', async () => {
    const estimate = 20_000; // two cents a call; the budget is one dollar
    const workers = [0, 1].map(() => startWorker(`${prefix}two:`, 'k-shared', 50 * estimate, estimate, 100));
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) worker.go();
    const results = await Promise.all(workers.map((worker) => worker.result));
    const granted = results.reduce((sum, result) => sum + result.granted, 0);
    const refused = results.reduce((sum, result) => sum + result.refused, 0);
    expect(results.flatMap((result) => result.other)).toEqual([]);
    expect(granted).toBe(50);
    expect(refused).toBe(150);
    // Both processes took part, so the counter really was shared.
    expect(results.every((result) => result.granted + result.refused === 100)).toBe(true);
    const [counter] = await redis.keys(`${prefix}two:c:day:*:key:k-shared`);
    expect(await redis.hgetall(counter)).toEqual({ m: String(50 * estimate), t: '50', r: '50' });
  }, 60_000);

  it('grants exactly what the budget covers to calls served from leases in both processes', async () => {
    const estimate = 20_000;
    const covered = 2_000;
    const workers = [0, 1].map(() => startWorker(`${prefix}leased:`, 'k-shared', covered * estimate, estimate, 0, 8));
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) worker.go();
    const results = await Promise.all(workers.map((worker) => worker.result));
    expect(results.flatMap((result) => result.other)).toEqual([]);
    expect(results.reduce((sum, result) => sum + result.granted, 0)).toBe(covered);
    // Every loop ends at its refusal, and both processes spent from leases.
    expect(results.map((result) => result.refused)).toEqual([8, 8]);
    for (const result of results) expect(result.immediate).toBeGreaterThan(result.granted / 4);
    const [counter] = await redis.keys(`${prefix}leased:c:day:*:key:k-shared`);
    expect(await redis.hgetall(counter)).toMatchObject({ m: String(covered * estimate), t: String(covered), r: String(covered), l: '0' });
  }, 60_000);
});

