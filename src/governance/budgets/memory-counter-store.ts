import { type CounterStore, type OutputAllowance, type Refusal, counterGrant, outputMicros } from './budget-engine';
import type { CounterPlan, Usage } from './budget-scope';

interface Counter {
  micros: number;
  tokens: number;
  requests: number;
  expireAt: number;
}

const SWEEP_INTERVAL_MS = 60_000;
const EMPTY = { micros: 0, tokens: 0, requests: 0 } as const;

/**
 * Counters in this process (the embedded default): the Redis script's semantics, made atomic by running
 * synchronously, and answering synchronously. Expired windows are swept once a minute.
 */
export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, Counter>();
  private readonly sweeper = setInterval(() => this.sweep(this.clock()), SWEEP_INTERVAL_MS).unref();

  constructor(private readonly clock: () => number = Date.now) {}

  tryCharge(plans: readonly CounterPlan[], estimate: Usage, output: OutputAllowance, now: number): Refusal | number {
    const found = plans.map((plan) => this.live(plan.key, now));
    let granted = output.wanted;
    for (let index = 0; index < plans.length; index++) {
      const used = found[index] ?? EMPTY;
      const grant = counterGrant(plans[index].scope.limit, used, estimate, output);
      if (typeof grant !== 'number') return { index, field: grant, used: used[grant] };
      granted = Math.min(granted, grant);
    }
    const micros = estimate.micros + outputMicros(granted, output);
    const tokens = estimate.tokens + granted;
    plans.forEach((plan, index) => {
      const counter = found[index] ?? { micros: 0, tokens: 0, requests: 0, expireAt: plan.window.end };
      counter.micros += micros;
      counter.tokens += tokens;
      counter.requests += 1;
      this.counters.set(plan.key, counter);
    });
    return granted;
  }

  adjust(keys: readonly string[], delta: Usage & { requests: number }): void {
    const now = this.clock();
    for (const key of keys) {
      const counter = this.live(key, now);
      if (!counter) continue;
      counter.micros += delta.micros;
      counter.tokens += delta.tokens;
      counter.requests += delta.requests;
    }
  }

  /** What a counter holds now (for tests and the CLI's view of memory stores). */
  read(key: string): Omit<Counter, 'expireAt'> | undefined {
    const counter = this.live(key, this.clock());
    return counter && { micros: counter.micros, tokens: counter.tokens, requests: counter.requests };
  }

  sweep(now: number): void {
    for (const [key, counter] of this.counters) if (counter.expireAt <= now) this.counters.delete(key);
  }

  get size(): number {
    return this.counters.size;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private live(key: string, now: number): Counter | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.expireAt <= now) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }
}
