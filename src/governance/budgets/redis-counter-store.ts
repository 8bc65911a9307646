import { Logger } from '@nestjs/common';
import { BudgetStoreUnavailableError } from './budget-errors';
import type { CounterStore, OutputAllowance, Refusal } from './budget-engine';
import type { CounterPlan, LimitField, Usage } from './budget-scope';
import type Redis from 'ioredis';
import { failFastRedis } from '../../common/fail-fast-redis';
import { StoreFailureLog } from '../../common/store-failure-log';

/**
 * Checks every counter, then charges all of them, inside one script: Redis runs it without interleaving any
 * other command, so callers in any number of processes see each other's reservations (no read-then-write).
 * Counters are hashes (m: micro-dollars, t: tokens, r: requests) that expire when their window ends.
 * ARGV: estimate micros, estimate tokens, output tokens wanted, output tokens at least, output price in
 * millionths of a micro-dollar per token, then per key: limit micros, tokens, requests (-1: none), expire-at ms.
 * Grants the most output tokens (up to wanted) that every counter covers, and charges the estimate plus that
 * output (CountingBudgetEngine's counterGrant is the same rule). Answers {0, output tokens granted}, or
 * {index (1-based), field, what the field held} of the first counter that cannot cover even the least output.
 */
const RESERVE_SCRIPT = `
local em, et = tonumber(ARGV[1]), tonumber(ARGV[2])
local want, least, pico = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local grant = want
for i = 1, #KEYS do
  local base = 5 + (i - 1) * 4
  local used = redis.call('HMGET', KEYS[i], 'm', 't', 'r')
  local um, ut, ur = tonumber(used[1]) or 0, tonumber(used[2]) or 0, tonumber(used[3]) or 0
  local lm, lt, lr = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
  if lm >= 0 then
    local left = lm - um - em
    local fits = grant
    if left < 0 then fits = -1 elseif pico > 0 then fits = math.floor(left * 1000000 / pico) end
    if fits < least then return {i, 'micros', um} end
    if fits < grant then grant = fits end
  end
  if lt >= 0 then
    local fits = lt - ut - et
    if fits < least then return {i, 'tokens', ut} end
    if fits < grant then grant = fits end
  end
  if lr >= 0 and ur + 1 > lr then return {i, 'requests', ur} end
end
local om = 0
if pico > 0 then om = math.ceil(grant * pico / 1000000) end
for i = 1, #KEYS do
  local base = 5 + (i - 1) * 4
  redis.call('HINCRBY', KEYS[i], 'm', em + om)
  redis.call('HINCRBY', KEYS[i], 't', et + grant)
  redis.call('HINCRBY', KEYS[i], 'r', 1)
  redis.call('PEXPIREAT', KEYS[i], ARGV[base + 4])
end
return {0, grant}
`;

/**
 * Moves counters that still exist by (actual - reserved); a counter whose window ended is not recreated.
 * ARGV: per key, its micros, tokens and requests deltas.
 */
const ADJUST_SCRIPT = `
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local base = (i - 1) * 3
    redis.call('HINCRBY', KEYS[i], 'm', ARGV[base + 1])
    redis.call('HINCRBY', KEYS[i], 't', ARGV[base + 2])
    redis.call('HINCRBY', KEYS[i], 'r', ARGV[base + 3])
  end
end
return 0
`;

type Delta = Usage & { requests: number };

type ScriptedRedis = Redis & {
  budgetReserve(numKeys: number, ...args: (string | number)[]): Promise<[0, number] | [number, LimitField, number]>;
  budgetAdjust(numKeys: number, ...args: (string | number)[]): Promise<0>;
};


/**
 * Counters in Redis, shared by every process on it. A reserve that cannot reach Redis fails closed
 * (BudgetStoreUnavailableError, 503): an unenforced budget is the failure issue 19 exists to end. A settle
 * that cannot reach it is logged and dropped, since the call has been made.
 */
export class RedisCounterStore implements CounterStore {
  private readonly logger = new Logger('Budgets');
  private readonly redis: ScriptedRedis;
  /** Settles not yet written, summed per counter key; written when the current turn of the event loop ends. */
  private pendingDeltas = new Map<string, Delta>();
  private adjusted?: Promise<void>;
  /** Settle writes sent and not yet answered. */
  private readonly writing = new Set<Promise<void>>();
  private closed = false;
  private readonly failures = new StoreFailureLog((message) => this.logger.error(message), (summary) => `budget store unavailable (${summary}); model calls with a budget or rate limit are refused until it answers`);

  constructor(url: string) {
    const redis = failFastRedis(url);
    // defineCommand sends EVALSHA and falls back to EVAL once per connection when Redis lacks the script.
    redis.defineCommand('budgetReserve', { lua: RESERVE_SCRIPT });
    redis.defineCommand('budgetAdjust', { lua: ADJUST_SCRIPT });
    this.redis = redis as ScriptedRedis;
  }

  /** Connects ahead of the first call; failure is logged, and calls fail closed until Redis answers. */
  async connect(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (error) {
      this.failures.report(error);
    }
  }

  async tryCharge(plans: readonly CounterPlan[], estimate: Usage, output: OutputAllowance): Promise<Refusal | number> {
    const args: (string | number)[] = [estimate.micros, estimate.tokens, output.wanted, output.least, output.picosPerToken];
    for (const { scope, window } of plans) {
      args.push(scope.limit.micros ?? -1, scope.limit.tokens ?? -1, scope.limit.requests ?? -1, window.end);
    }
    let answer: [0, number] | [number, LimitField, number];
    try {
      answer = await this.redis.budgetReserve(plans.length, ...plans.map((plan) => plan.key), ...args);
    } catch (error) {
      this.failures.report(error);
      throw new BudgetStoreUnavailableError();
    }
    if (answer.length === 2) return answer[1];
    return { index: answer[0] - 1, field: answer[1], used: answer[2] };
  }

  /**
   * Adds the delta to the counters' pending sums; the sums of every settle made in one turn of the event loop
   * go to Redis in one script call when the turn ends (and the promise resolves then). Settles are made after
   * the answer has gone out, so deferring them a turn changes no refusal by more than that turn; one command
   * per turn instead of one per call halves a budgeted call's Redis commands.
   */
  adjust(keys: readonly string[], delta: Delta): Promise<void> {
    // After close the client is gone: the counters keep the estimate until their window ends.
    if (this.closed) return Promise.resolve();
    for (const key of keys) {
      const sum = this.pendingDeltas.get(key);
      if (sum) {
        sum.micros += delta.micros;
        sum.tokens += delta.tokens;
        sum.requests += delta.requests;
      } else this.pendingDeltas.set(key, { micros: delta.micros, tokens: delta.tokens, requests: delta.requests });
    }
    this.adjusted ??= new Promise((resolve) =>
      setImmediate(() => {
        this.adjusted = undefined;
        const writing = this.writeDeltas().finally(() => this.writing.delete(writing));
        this.writing.add(writing);
        resolve(writing);
      }),
    );
    return this.adjusted;
  }

  /** Writes every settle already made, waiting for those on their way, then disconnects. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.adjusted || this.writing.size > 0) await Promise.all([this.adjusted, ...this.writing]);
    this.redis.disconnect();
  }

  private async writeDeltas(): Promise<void> {
    const deltas = this.pendingDeltas;
    this.pendingDeltas = new Map();
    const args: (string | number)[] = [...deltas.keys()];
    for (const delta of deltas.values()) args.push(delta.micros, delta.tokens, delta.requests);
    try {
      await this.redis.budgetAdjust(deltas.size, ...args);
    } catch (error) {
      this.failures.report(error);
    }
  }
}
