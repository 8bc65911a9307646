import { Logger } from '@nestjs/common';
import { BudgetStoreUnavailableError } from './budget-errors';
import type { CounterStore, OutputAllowance, Refusal } from './budget-engine';
import type { CounterPlan, LimitField, Usage } from './budget-scope';
import type Redis from 'ioredis';
import { failFastRedis } from '../../common/fail-fast-redis';
import { StoreFailureLog } from '../../common/store-failure-log';

/**
 * Everything one turn of the event loop asked of the counters, in one script: Redis runs it without
 * interleaving any other command, so callers in any number of processes see each other's reservations (no
 * read-then-write). Counters are hashes (m: micro-dollars, t: tokens, r: requests) that expire when their
 * window ends; KEYS are the counters the turn touched, each once, and ARGV names them by index.
 *
 * First the settles: ARGV[1] is their number, then per settle its key index and micros, tokens and requests
 * deltas; a counter whose window ended is not recreated. Then the reserves, in the order they were made: their
 * number, then per reserve its key count, estimate micros, estimate tokens, output tokens wanted, output tokens
 * at least, output price in millionths of a micro-dollar per token, then per key its index, limit micros, tokens,
 * requests (-1: none) and expire-at ms. Each reserve is the single-call rule (CountingBudgetEngine's counterGrant
 * is the same): grant the most output tokens (up to wanted) that every counter covers and charge the estimate
 * plus that output to all of them, or charge nothing. Reserve i's answer is the reply's triple 3i-2..3i:
 * {0, output tokens granted, 0}, {index (1-based), field, what the field held} of the first counter that cannot
 * cover even the least output, or {-1, error, 0} when a counter could not be read (checked before any charge,
 * so that reserve charges nothing and the others are unaffected).
 */
const TURN_SCRIPT = `
local at = 2
for _ = 1, tonumber(ARGV[1]) do
  local key = KEYS[tonumber(ARGV[at])]
  if redis.call('EXISTS', key) == 1 then
    redis.call('HINCRBY', key, 'm', ARGV[at + 1])
    redis.call('HINCRBY', key, 't', ARGV[at + 2])
    redis.call('HINCRBY', key, 'r', ARGV[at + 3])
  end
  at = at + 4
end
local answers = {}
local reserves = tonumber(ARGV[at])
at = at + 1
for _ = 1, reserves do
  local n = tonumber(ARGV[at])
  local em, et = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  local want, least, pico = tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4]), tonumber(ARGV[at + 5])
  local first = at + 6
  at = first + n * 5
  local grant = want
  local refusal
  for i = 1, n do
    local base = first + (i - 1) * 5
    local used = redis.pcall('HMGET', KEYS[tonumber(ARGV[base])], 'm', 't', 'r')
    if used.err then refusal = {-1, used.err, 0} break end
    local um, ut, ur = tonumber(used[1]) or 0, tonumber(used[2]) or 0, tonumber(used[3]) or 0
    local lm, lt, lr = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
    if lm >= 0 then
      local left = lm - um - em
      local fits = grant
      if left < 0 then fits = -1 elseif pico > 0 then fits = math.floor(left * 1000000 / pico) end
      if fits < least then refusal = {i, 'micros', um} break end
      if fits < grant then grant = fits end
    end
    if lt >= 0 then
      local fits = lt - ut - et
      if fits < least then refusal = {i, 'tokens', ut} break end
      if fits < grant then grant = fits end
    end
    if lr >= 0 and ur + 1 > lr then refusal = {i, 'requests', ur} break end
  end
  if refusal then
    answers[#answers + 1] = refusal[1]
    answers[#answers + 1] = refusal[2]
    answers[#answers + 1] = refusal[3]
  else
    local om = 0
    if pico > 0 then om = math.ceil(grant * pico / 1000000) end
    for i = 1, n do
      local base = first + (i - 1) * 5
      local key = KEYS[tonumber(ARGV[base])]
      redis.call('HINCRBY', key, 'm', em + om)
      redis.call('HINCRBY', key, 't', et + grant)
      redis.call('HINCRBY', key, 'r', 1)
      redis.call('PEXPIREAT', key, ARGV[base + 4])
    end
    answers[#answers + 1] = 0
    answers[#answers + 1] = grant
    answers[#answers + 1] = 0
  end
end
return answers
`;

type Delta = Usage & { requests: number };

/** A reserve waiting for the end of its turn, and how to answer it. */
interface PendingReserve {
  plans: readonly CounterPlan[];
  estimate: Usage;
  output: OutputAllowance;
  resolve(answer: Refusal | number): void;
  reject(error: Error): void;
}

type ScriptedRedis = Redis & {
  budgetTurn(numKeys: number, ...args: (string | number)[]): Promise<(number | string)[]>;
};

/**
 * Counters in Redis, shared by every process on it. The reserves and settles made in one turn of the event
 * loop, and in the turns while the previous script call is on its way, go to Redis together in one script call
 * (decision D10: exact, since the script runs them one after the other as separate calls would run, and one
 * round trip instead of one per call).
 * A reserve that cannot reach Redis fails closed (BudgetStoreUnavailableError, 503): an unenforced budget is
 * the failure issue 19 exists to end. A settle that cannot reach it is logged and dropped, since the call has
 * been made.
 */
export class RedisCounterStore implements CounterStore {
  private readonly logger = new Logger('Budgets');
  private readonly redis: ScriptedRedis;
  /** Settles not yet written, summed per counter key. */
  private pendingDeltas = new Map<string, Delta>();
  /** Reserves not yet sent, in the order they were made. */
  private pendingReserves: PendingReserve[] = [];
  /** Resolves once the script call carrying the pending settles and reserves has been answered (or has failed). */
  private nextCall?: Promise<void>;
  /** The script call sent and not yet answered: at most one at a time. */
  private inFlight?: Promise<void>;
  private closed = false;
  private readonly failures = new StoreFailureLog((message) => this.logger.error(message), (summary) => `budget store unavailable (${summary}); model calls with a budget or rate limit are refused until it answers`);

  constructor(url: string) {
    const redis = failFastRedis(url);
    // defineCommand sends EVALSHA and falls back to EVAL once per connection when Redis lacks the script.
    redis.defineCommand('budgetTurn', { lua: TURN_SCRIPT });
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

  /**
   * Answers when the script call carrying it has been answered. The wait is the rest of the current turn, and
   * the previous call's round trip if one is on its way: requests read from the sockets meanwhile share a round
   * trip, which is what makes Redis-backed budgets cost little more than counters in memory (bench/RESULTS.md).
   */
  tryCharge(plans: readonly CounterPlan[], estimate: Usage, output: OutputAllowance): Promise<Refusal | number> {
    if (this.closed) return Promise.reject(new BudgetStoreUnavailableError());
    return new Promise((resolve, reject) => {
      this.pendingReserves.push({ plans, estimate, output, resolve, reject });
      void this.pendingCall();
    });
  }

  /**
   * Adds the delta to the counters' pending sums, written with the next script call (the promise resolves
   * then). Settles are made after the answer has gone out, so deferring them a round trip changes no refusal by
   * more than that round trip.
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
    return this.pendingCall();
  }

  /** Writes every settle already made and answers every reserve already made, then disconnects. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.nextCall || this.inFlight) await Promise.all([this.nextCall, this.inFlight]);
    this.redis.disconnect();
  }

  private pendingCall(): Promise<void> {
    this.nextCall ??= this.sendPending();
    return this.nextCall;
  }

  /**
   * Sends what is pending once the current turn has ended and no script call is on its way: what is made while
   * one is on its way joins the next (group commit), so under load a call carries the reserves of several turns
   * and each request costs a fraction of a round trip. One call at a time also keeps Redis's order the order
   * the reserves were made in.
   */
  private async sendPending(): Promise<void> {
    await new Promise<void>((turnEnded) => setImmediate(turnEnded));
    while (this.inFlight) await this.inFlight;
    this.nextCall = undefined;
    const call = this.writePending();
    this.inFlight = call;
    try {
      await call;
    } finally {
      if (this.inFlight === call) this.inFlight = undefined;
    }
  }

  /** Sends the pending settles and reserves as one script call and answers each reserve. Never rejects. */
  private async writePending(): Promise<void> {
    const deltas = this.pendingDeltas;
    const reserves = this.pendingReserves;
    this.pendingDeltas = new Map();
    this.pendingReserves = [];
    const keys: string[] = [];
    const indexes = new Map<string, number>();
    const indexOf = (key: string): number => {
      let index = indexes.get(key);
      if (index === undefined) {
        index = keys.push(key);
        indexes.set(key, index);
      }
      return index;
    };
    const args: (string | number)[] = [deltas.size];
    for (const [key, delta] of deltas) args.push(indexOf(key), delta.micros, delta.tokens, delta.requests);
    args.push(reserves.length);
    for (const { plans, estimate, output } of reserves) {
      args.push(plans.length, estimate.micros, estimate.tokens, output.wanted, output.least, output.picosPerToken);
      for (const { key, scope, window } of plans) args.push(indexOf(key), scope.limit.micros ?? -1, scope.limit.tokens ?? -1, scope.limit.requests ?? -1, window.end);
    }
    let answers: (number | string)[];
    try {
      answers = await this.redis.budgetTurn(keys.length, ...keys, ...args);
    } catch (error) {
      this.failures.report(error);
      for (const reserve of reserves) reserve.reject(new BudgetStoreUnavailableError());
      return;
    }
    for (let index = 0; index < reserves.length; index++) {
      const code = answers[3 * index] as number;
      const value = answers[3 * index + 1];
      if (code === 0) reserves[index].resolve(value as number);
      else if (code > 0) reserves[index].resolve({ index: code - 1, field: value as LimitField, used: answers[3 * index + 2] as number });
      else {
        this.failures.report(Object.assign(new Error(String(value)), { name: 'ReplyError', code: String(value).split(' ')[0] }));
        reserves[index].reject(new BudgetStoreUnavailableError());
      }
    }
  }
}
