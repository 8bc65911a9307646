import { Logger } from '@nestjs/common';
import { BudgetStoreUnavailableError } from './budget-errors';
import type { CounterStore, OutputAllowance, Refusal, StoreAnswer } from './budget-engine';
import { type CounterDelta, CounterLeases, LEASE_HEADROOM, LEASE_TTL_MS, callCharge, leaseSize } from './counter-leases';
import type { CounterPlan, LimitField, Usage } from './budget-scope';
import type Redis from 'ioredis';
import { failFastRedis } from '../../common/fail-fast-redis';
import { StoreFailureLog } from '../../common/store-failure-log';

/**
 * Everything one turn of the event loop asked of the counters, in one script: Redis runs it without
 * interleaving any other command, so callers in any number of processes see each other's reservations (no
 * read-then-write). Counters are hashes (m: micro-dollars, t: tokens, r: requests) that expire when their
 * window ends; a counter with leases (decision D10) also holds l: leases outstanding, le: when the last one
 * granted ends (Redis's clock, ms), x: no new lease before this time. KEYS are the counters the turn touched,
 * each once, and ARGV names them by index.
 *
 * ARGV[1..3]: a lease's time (ms), how many more leases a counter must have room for after granting one, and
 * how long after its end a lease never returned stops being waited for (its holder died). Then the settles:
 * their number, then per settle its key index and micros, tokens, requests and leases deltas; a counter whose
 * window ended is not recreated. Then the reserves, in the order they were made: their number, then per
 * reserve its key count, estimate micros, estimate tokens, output tokens wanted, output tokens at least, output
 * price in millionths of a micro-dollar per token, the lease size asked for (micros, tokens, requests), 1 when it
 * may be told to ask again (0 once it has waited its limit), then per key its index, limit micros, tokens, requests
 * (-1: none), expire-at ms and 1 when it asks for a lease. A lease count returned below zero (a return Redis saw
 * twice, or after it lost the counter) is set to zero.
 *
 * Each reserve is the single-call rule (CountingBudgetEngine's counterGrant is the same): grant the most output
 * tokens (up to wanted) that every counter covers and charge the estimate plus that output to all of them, or
 * charge nothing. A counter that would refuse the call, or grant it less than wanted, while leases are
 * outstanding on it does neither: the answer is to ask again later, and no lease is granted on it until then, so
 * a refusal or a shortened grant only ever reads a counter no lease holds room of. A wait is at most a lease's
 * time, so the block on new leases outlasts it. A granted call that got all
 * it wanted also takes a lease on each counter that asks, if the counter has room for it and LEASE_HEADROOM
 * more on every limited field. Reserve i's answer is the reply's triple 3i-2..3i: {0, output tokens granted,
 * bit mask of the counters leased}, {index (1-based), field, what the field held} of the first counter that
 * cannot cover even the least output, {-1, error, 0} when a counter could not be read (checked before any
 * charge, so that reserve charges nothing and the others are unaffected), or {-2, ms to wait, 0}.
 */
const TURN_SCRIPT = `
local ttl, headroom, grace = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local clock
local function now()
  if not clock then
    local time = redis.call('TIME')
    clock = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return clock
end
local at = 5
for _ = 1, tonumber(ARGV[4]) do
  local key = KEYS[tonumber(ARGV[at])]
  if redis.call('EXISTS', key) == 1 then
    redis.call('HINCRBY', key, 'm', ARGV[at + 1])
    redis.call('HINCRBY', key, 't', ARGV[at + 2])
    redis.call('HINCRBY', key, 'r', ARGV[at + 3])
    if ARGV[at + 4] ~= '0' and redis.call('HINCRBY', key, 'l', ARGV[at + 4]) < 0 then redis.call('HSET', key, 'l', 0) end
  end
  at = at + 5
end
local answers = {}
local reserves = tonumber(ARGV[at])
at = at + 1
for _ = 1, reserves do
  local n = tonumber(ARGV[at])
  local em, et = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  local want, least, pico = tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4]), tonumber(ARGV[at + 5])
  local sm, st, sr = tonumber(ARGV[at + 6]), tonumber(ARGV[at + 7]), tonumber(ARGV[at + 8])
  local may_wait = ARGV[at + 9] == '1'
  local first = at + 10
  at = first + n * 6
  local grant = want
  local refusal
  local waits = {}
  local counters = {}
  for i = 1, n do
    local base = first + (i - 1) * 6
    local key = KEYS[tonumber(ARGV[base])]
    local read = redis.pcall('HMGET', key, 'm', 't', 'r', 'l', 'le', 'x')
    if read.err then refusal = {-1, read.err, 0} break end
    local c = {m = tonumber(read[1]) or 0, t = tonumber(read[2]) or 0, r = tonumber(read[3]) or 0, l = tonumber(read[4]) or 0, le = tonumber(read[5]) or 0, x = tonumber(read[6]) or 0}
    counters[i] = c
    local lm, lt, lr = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
    local fits = want
    local field
    if lm >= 0 then
      local left = lm - c.m - em
      local covered = want
      if left < 0 then covered = -1 elseif pico > 0 then covered = math.floor(left * 1000000 / pico) end
      if covered < least then field = 'micros' elseif covered < fits then fits = covered end
    end
    if not field and lt >= 0 then
      local covered = lt - c.t - et
      if covered < least then field = 'tokens' elseif covered < fits then fits = covered end
    end
    if not field and lr >= 0 and c.r + 1 > lr then field = 'requests' end
    if may_wait and (field or fits < want) and c.l > 0 and now() < c.le + grace then waits[#waits + 1] = key end
    if field then
      local held = c.r
      if field == 'micros' then held = c.m elseif field == 'tokens' then held = c.t end
      refusal = {i, field, held}
      break
    end
    if fits < grant then grant = fits end
  end
  if refusal and refusal[1] == -1 then
    answers[#answers + 1] = -1
    answers[#answers + 1] = refusal[2]
    answers[#answers + 1] = 0
  elseif #waits > 0 and (refusal == nil or waits[#waits] == KEYS[tonumber(ARGV[first + (refusal[1] - 1) * 6])]) then
    local wait = 1
    for _, key in ipairs(waits) do
      local le = tonumber(redis.call('HGET', key, 'le')) or 0
      local blocked = math.max(le, now()) + ttl
      if blocked > (tonumber(redis.call('HGET', key, 'x')) or 0) then redis.call('HSET', key, 'x', blocked) end
      local ms = math.max(2, math.floor((now() - le) / 2))
      if le > now() then ms = le - now() + 1 end
      if ms > ttl then ms = ttl end
      if ms > wait then wait = ms end
    end
    answers[#answers + 1] = -2
    answers[#answers + 1] = wait
    answers[#answers + 1] = 0
  elseif refusal then
    answers[#answers + 1] = refusal[1]
    answers[#answers + 1] = refusal[2]
    answers[#answers + 1] = refusal[3]
  else
    local om = 0
    if pico > 0 then om = math.ceil(grant * pico / 1000000) end
    local leased, bit = 0, 1
    for i = 1, n do
      local base = first + (i - 1) * 6
      local key = KEYS[tonumber(ARGV[base])]
      redis.call('HINCRBY', key, 'm', em + om)
      redis.call('HINCRBY', key, 't', et + grant)
      redis.call('HINCRBY', key, 'r', 1)
      redis.call('PEXPIREAT', key, ARGV[base + 4])
      if ARGV[base + 5] == '1' and grant == want then
        local c = counters[i]
        local lm, lt, lr = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3])
        local room = headroom + 1
        if (c.x == 0 or now() >= c.x)
          and (lm < 0 or lm - c.m - em - om >= room * sm)
          and (lt < 0 or lt - c.t - et - grant >= room * st)
          and (lr < 0 or lr - c.r - 1 >= room * sr) then
          redis.call('HINCRBY', key, 'm', sm)
          redis.call('HINCRBY', key, 't', st)
          redis.call('HINCRBY', key, 'r', sr)
          redis.call('HINCRBY', key, 'l', 1)
          if now() + ttl > c.le then redis.call('HSET', key, 'le', now() + ttl) end
          leased = leased + bit
        end
      end
      bit = bit * 2
    end
    answers[#answers + 1] = 0
    answers[#answers + 1] = grant
    answers[#answers + 1] = leased
  end
end
return answers
`;

/** A reserve waiting for its script call, and how to answer it. */
interface PendingReserve {
  plans: readonly CounterPlan[];
  estimate: Usage;
  output: OutputAllowance;
  /** The lease asked for on the counters flagged in `leaseWanted` (none when no flag is set). */
  leaseSize: CounterDelta;
  leaseWanted: boolean[];
  /** performance.now() of its first "ask again", if it had one. */
  waitingSince?: number;
  resolve(answer: Refusal | number): void;
  reject(error: Error): void;
}

type ScriptedRedis = Redis & {
  budgetTurn(numKeys: number, ...args: (string | number)[]): Promise<(number | string)[]>;
};

/** How long a counter that refused a lease is not asked for another by this process. */
const LEASE_DENIED_MS = LEASE_TTL_MS;
/** After this long, a lease never returned (its process died) no longer holds a refusal back. */
const LEASE_GRACE_MS = 5_000;
/**
 * The longest a reserve is told to ask again: then it is decided on the counter as it is. A lease count that
 * never comes down (a return lost with its connection) would otherwise hold it back while other callers keep
 * taking leases and moving the count's end.
 */
const LONGEST_WAIT_MS = LEASE_TTL_MS + LEASE_GRACE_MS;

/**
 * Counters in Redis, shared by every process on it. A caller far from its limits is served from leases: a
 * share of each of its counters taken ahead, charged in Redis, and spent here without a round trip, then
 * returned (decision D10). Every other reserve and settle made in one turn of the event loop, and in the turns
 * while the previous script call is on its way, goes to Redis in one script call (exact, since the script runs
 * them one after the other as separate calls would run, and one round trip instead of one per call).
 * A reserve that cannot reach Redis fails closed (BudgetStoreUnavailableError, 503): an unenforced budget is
 * the failure issue 19 exists to end; leases are not spent while the connection is down. Settles and lease
 * returns made while the connection is down wait for it; those of a script call that fails on its way are
 * logged and dropped, since whether Redis applied them is unknown.
 */
export class RedisCounterStore implements CounterStore {
  private readonly logger = new Logger('Budgets');
  private readonly redis: ScriptedRedis;
  /** Settles and lease returns not yet written, summed per counter key. */
  private pendingDeltas = new Map<string, CounterDelta>();
  /** Reserves not yet sent, in the order they were made. */
  private pendingReserves: PendingReserve[] = [];
  /** Resolves once the script call carrying the pending settles and reserves has been answered (or has failed). */
  private nextCall?: Promise<void>;
  /** The script call sent and not yet answered: at most one at a time. */
  private inFlight?: Promise<void>;
  private readonly leases = new CounterLeases((key, delta) => this.addDelta(key, delta));
  /** Counters whose lease is asked for by a script call pending or on its way, and that call. */
  private readonly leaseAsked = new Map<string, Promise<void>>();
  /** Counters that refused this process a lease, and until when it does not ask again (performance.now()). */
  private readonly leaseDenied = new Map<string, number>();
  /** Reserves told to ask again later, waiting for their timer. */
  private readonly waiting = new Map<NodeJS.Timeout, PendingReserve>();
  private closed = false;
  private readonly failures = new StoreFailureLog((message) => this.logger.error(message), (summary) => `budget store unavailable (${summary}); model calls with a budget or rate limit are refused until it answers`);

  constructor(url: string) {
    // A script call is not sent twice: a reply lost with its connection leaves the call applied or not, and
    // sending it again would apply a lease's return or grant a second time.
    const redis = failFastRedis(url, { autoResendUnfulfilledCommands: false });
    redis.on('ready', () => this.pendingDeltas.size > 0 && void this.pendingCall());
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
   * Answers at once from the caller's leases when they have room; else when the script call carrying it has
   * been answered. The wait is the rest of the current turn, and the previous call's round trip if one is on
   * its way: requests read from the sockets meanwhile share a round trip.
   */
  tryCharge(plans: readonly CounterPlan[], estimate: Usage, output: OutputAllowance): StoreAnswer<Refusal | number> {
    if (this.closed) return Promise.reject(new BudgetStoreUnavailableError());
    const charge = callCharge(estimate, output);
    if (this.redis.status === 'ready') {
      const granted = this.leases.charge(plans, charge, output.wanted);
      if (granted !== undefined) return granted;
    }
    const now = performance.now();
    const leaseWanted: boolean[] = [];
    for (const plan of plans) {
      const asked = this.leaseAsked.get(plan.key);
      // A lease on its way may serve this call too: it asks again once that call is answered.
      if (asked) return asked.then(() => this.tryCharge(plans, estimate, output));
      const covered = this.leases.covers(plan, charge);
      // A lease without room for this call goes back in the same script call, ahead of the reserve, so the
      // counter the reserve reads holds none of this process's unspent share.
      if (!covered) this.leases.giveBack(plan.key);
      leaseWanted.push(!covered && !((this.leaseDenied.get(plan.key) ?? 0) > now));
    }
    return new Promise((resolve, reject) => {
      this.pendingReserves.push({ plans, estimate, output, leaseSize: leaseSize(charge), leaseWanted, resolve, reject });
      const call = this.pendingCall();
      plans.forEach((plan, index) => leaseWanted[index] && this.leaseAsked.set(plan.key, call));
    });
  }

  /**
   * A refund goes back into the counter's lease while it lasts; anything else, and refunds of counters without
   * one, is added to the counters' pending sums, written with the next script call (the promise resolves
   * then). Settles are made after the answer has gone out, so deferring them a round trip changes no refusal by
   * more than that round trip.
   */
  adjust(keys: readonly string[], delta: Usage & { requests: number }): StoreAnswer<void> {
    // After close the client is gone: the counters keep the estimate until their window ends.
    if (this.closed) return;
    const refund = delta.micros <= 0 && delta.tokens <= 0 && delta.requests <= 0;
    let written = false;
    for (const key of keys) {
      if (refund && this.leases.refund(key, delta)) continue;
      this.addDelta(key, { ...delta, leases: 0 });
      written = true;
    }
    return written ? this.pendingCall() : undefined;
  }

  /**
   * Returns every lease, writes every settle already made and answers every reserve already made, then
   * disconnects. Reserves told to ask again later are refused as the store is gone.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const [timer, reserve] of this.waiting) {
      clearTimeout(timer);
      reserve.reject(new BudgetStoreUnavailableError());
    }
    this.waiting.clear();
    this.leases.giveBackAll();
    while (this.nextCall || this.inFlight) await Promise.all([this.nextCall, this.inFlight]);
    this.redis.disconnect();
  }

  private addDelta(key: string, delta: CounterDelta, send = delta.leases !== 0): void {
    const sum = this.pendingDeltas.get(key);
    if (sum) {
      sum.micros += delta.micros;
      sum.tokens += delta.tokens;
      sum.requests += delta.requests;
      sum.leases += delta.leases;
    } else this.pendingDeltas.set(key, { ...delta });
    if (send) void this.pendingCall();
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
    if (this.redis.status !== 'ready' && !this.closed) {
      // Not sent: the settles and lease returns wait for the connection (written when it is ready), the
      // reserves fail closed.
      for (const [key, delta] of deltas) this.addDelta(key, delta, false);
      this.failures.report(new Error(`connection ${this.redis.status}`));
      this.forgetLeaseAsks(reserves);
      for (const reserve of reserves) reserve.reject(new BudgetStoreUnavailableError());
      return;
    }
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
    const args: (string | number)[] = [LEASE_TTL_MS, LEASE_HEADROOM, LEASE_GRACE_MS, deltas.size];
    for (const [key, delta] of deltas) args.push(indexOf(key), delta.micros, delta.tokens, delta.requests, delta.leases);
    args.push(reserves.length);
    for (const { plans, estimate, output, leaseSize: size, leaseWanted, waitingSince } of reserves) {
      const mayWait = waitingSince === undefined || performance.now() - waitingSince < LONGEST_WAIT_MS ? 1 : 0;
      args.push(plans.length, estimate.micros, estimate.tokens, output.wanted, output.least, output.picosPerToken, size.micros, size.tokens, size.requests, mayWait);
      plans.forEach(({ key, scope, window }, index) =>
        args.push(indexOf(key), scope.limit.micros ?? -1, scope.limit.tokens ?? -1, scope.limit.requests ?? -1, window.end, leaseWanted[index] ? 1 : 0),
      );
    }
    const sentAt = performance.now();
    let answers: (number | string)[];
    try {
      answers = await this.redis.budgetTurn(keys.length, ...keys, ...args);
    } catch (error) {
      this.failures.report(error);
      this.forgetLeaseAsks(reserves);
      for (const reserve of reserves) reserve.reject(new BudgetStoreUnavailableError());
      return;
    }
    this.forgetLeaseAsks(reserves);
    for (let index = 0; index < reserves.length; index++) {
      const reserve = reserves[index];
      const code = answers[3 * index] as number;
      const value = answers[3 * index + 1];
      // A reserve refused or told to wait took no lease: its counters are not asked again for one a while, so
      // the reserves behind it go to Redis together instead of one round trip after the other.
      this.holdLeases(reserve, code === 0 ? (answers[3 * index + 2] as number) : 0, sentAt);
      if (code === 0) reserve.resolve(value as number);
      else if (code > 0) reserve.resolve({ index: code - 1, field: value as LimitField, used: answers[3 * index + 2] as number });
      else if (code === -2) this.askAgainLater(reserve, value as number);
      else {
        this.failures.report(Object.assign(new Error(String(value)), { name: 'ReplyError', code: String(value).split(' ')[0] }));
        reserve.reject(new BudgetStoreUnavailableError());
      }
    }
  }

  /** Holds the leases the script granted (bit i of `leased`: plan i) and remembers the counters that refused one. */
  private holdLeases(reserve: PendingReserve, leased: number, sentAt: number): void {
    const now = performance.now();
    const { leaseSize: size } = reserve;
    reserve.plans.forEach((plan, index) => {
      if (!reserve.leaseWanted[index]) return;
      if (leased % 2 ** (index + 1) < 2 ** index) this.leaseDenied.set(plan.key, now + LEASE_DENIED_MS);
      // Granted while closing: given back at once, with the writes close is waiting for.
      else if (this.closed) this.addDelta(plan.key, { micros: -size.micros, tokens: -size.tokens, requests: -size.requests, leases: -1 });
      else this.leases.hold(plan.key, size, plan.scope.limit, sentAt);
    });
    if (this.leaseDenied.size > 1024) for (const [key, until] of this.leaseDenied) if (until <= now) this.leaseDenied.delete(key);
  }

  private forgetLeaseAsks(reserves: readonly PendingReserve[]): void {
    for (const reserve of reserves) reserve.plans.forEach((plan, index) => reserve.leaseWanted[index] && this.leaseAsked.delete(plan.key));
  }

  /**
   * A counter with leases outstanding would have refused or shortened the call: it goes again, alone and
   * asking for no lease, once those leases are due back.
   */
  private askAgainLater(reserve: PendingReserve, ms: number): void {
    if (this.closed) return reserve.reject(new BudgetStoreUnavailableError());
    const again = { ...reserve, leaseWanted: reserve.plans.map(() => false), waitingSince: reserve.waitingSince ?? performance.now() };
    const timer = setTimeout(() => {
      this.waiting.delete(timer);
      this.pendingReserves.push(again);
      void this.pendingCall();
    }, ms);
    this.waiting.set(timer, again);
  }
}
