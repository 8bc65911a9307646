import type { CounterStore, Refusal } from './budget-engine';
import type { CounterPlan, LimitField, Usage } from './budget-scope';

interface Counter {
  micros: number;
  tokens: number;
  requests: number;
  expireAt: number;
}

const SWEEP_INTERVAL_MS = 60_000;

/**
 * Counters in this process (the embedded default): the Redis script's semantics, made atomic by running
 * synchronously, and answering synchronously. Expired windows are swept once a minute.
 */
export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, Counter>();
  private readonly sweeper = setInterval(() => this.sweep(this.clock()), SWEEP_INTERVAL_MS).unref();

  constructor(private readonly clock: () => number = Date.now) {}

  tryCharge(plans: readonly CounterPlan[], estimate: Usage, now: number): Refusal | undefined {
    const found = plans.map((plan) => this.live(plan.key, now));
    for (let index = 0; index < plans.length; index++) {
      const used = found[index] ?? { micros: 0, tokens: 0, requests: 0 };
      const field = overLimit(plans[index], used, estimate);
      if (field) return { index, field };
    }
    plans.forEach((plan, index) => {
      const counter = found[index] ?? { micros: 0, tokens: 0, requests: 0, expireAt: plan.window.end };
      counter.micros += estimate.micros;
      counter.tokens += estimate.tokens;
      counter.requests += 1;
      this.counters.set(plan.key, counter);
    });
    return undefined;
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

/** The first field of a plan's limit that this call would pass, if any (same order as the Redis script). */
export function overLimit(plan: CounterPlan, used: { micros: number; tokens: number; requests: number }, estimate: Usage): LimitField | undefined {
  const { micros, tokens, requests } = plan.scope.limit;
  if (micros !== undefined && used.micros + estimate.micros > micros) return 'micros';
  if (tokens !== undefined && used.tokens + estimate.tokens > tokens) return 'tokens';
  if (requests !== undefined && used.requests + 1 > requests) return 'requests';
  return undefined;
}
