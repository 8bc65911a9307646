/**
 * Cool-downs of deployments (a circuit breaker per deployment, docs/decisions.md B18): a deployment whose
 * failures among its last calls reach the threshold, or that answered 429 with a Retry-After, is skipped until
 * its cool-down ends; then one call probes it (half-open), and its outcome closes the breaker or cools it down
 * again. Failure counts are this process's; cool-downs and the probe are shared through {@link SharedCooldowns}
 * when one is configured (Redis), so a fleet stops calling a failing deployment together.
 */
import { AuthenticationError, isFallbackEligible, RateLimitError, TimeoutError } from '../errors';
import type { Capability } from './call-features';

export interface CooldownPolicy {
  /** Failures among the last `window` calls that cool a deployment down. */
  failures: number;
  window: number;
  cooldownMs: number;
  /** A 429 with Retry-After cools the deployment down at once, for that long (at least 1 s). */
  honourRetryAfter: boolean;
}

export const DEFAULT_COOLDOWN_POLICY: Readonly<CooldownPolicy> = Object.freeze({ failures: 3, window: 10, cooldownMs: 30_000, honourRetryAfter: true });

/** How long one probe may hold a deployment before another call may probe it. */
export const PROBE_HOLD_MS = 30_000;

/** Cool-downs seen by every process on one store; failures to reach it leave this process's own view. */
export interface SharedCooldowns {
  /** Tells every process that `key` cools down until `until` (epoch ms). */
  publish(key: string, until: number): void;
  /** Claims the one probe of `key` across the fleet; false when another process holds it. */
  claimProbe(key: string): Promise<boolean>;
  /** The probe came back (answered or failed): another process may probe after the next cool-down. */
  releaseProbe(key: string): void;
  /**
   * Starts following the others' cool-downs, calling `seen` with each (key, until) it learns; resolves once the
   * first reading is in (or failed).
   */
  follow(keys: readonly string[], seen: (key: string, until: number) => void): Promise<void>;
  close(): Promise<void>;
}

export type DeploymentState = 'healthy' | 'cooling' | 'probing';

/** One deployment's breaker: its last outcomes, and until when it cools down. */
class Breaker {
  /** The last `window` outcomes as a ring, true for a failure. */
  readonly outcomes: boolean[] = [];
  next = 0;
  failed = 0;
  coolingUntil = 0;
  /** Set while this process's probe is out. */
  probing = false;
}

export class DeploymentHealth {
  private readonly breakers = new Map<string, Breaker>();
  /** Resolves once the shared cool-downs were read the first time (at once without a shared store). */
  readonly loaded: Promise<void>;

  constructor(
    readonly policy: CooldownPolicy,
    keys: readonly string[],
    private readonly shared?: SharedCooldowns,
    private readonly now: () => number = Date.now,
  ) {
    for (const key of keys) this.breakers.set(key, new Breaker());
    this.loaded = shared ? shared.follow(keys, (key, until) => this.cooledElsewhere(key, until)) : Promise.resolve();
  }

  /** healthy: takes traffic; cooling: skipped until {@link coolingUntil}; probing: a probe is out. */
  state(key: string): DeploymentState {
    const breaker = this.breaker(key);
    if (breaker.probing) return 'probing';
    return breaker.coolingUntil > this.now() ? 'cooling' : 'healthy';
  }

  coolingUntil(key: string): number {
    return this.breaker(key).coolingUntil;
  }

  /** Takes the probe of a deployment past its cool-down; false when another call (or process) has it. */
  async claimProbe(key: string): Promise<boolean> {
    const breaker = this.breaker(key);
    if (breaker.probing) return false;
    breaker.probing = true;
    const claimed = this.shared ? await this.shared.claimProbe(key).catch(() => true) : true;
    if (!claimed) {
      breaker.probing = false;
      // Another process probes: stay off the deployment for a moment rather than ask every call to claim.
      breaker.coolingUntil = this.now() + 1000;
    }
    return claimed;
  }

  /**
   * A claimed probe that was never sent (the call was refused before its attempt): another call may probe at
   * once, rather than the deployment staying out of this process for good.
   */
  unclaimProbe(key: string): void {
    const breaker = this.breaker(key);
    if (!breaker.probing) return;
    breaker.probing = false;
    this.shared?.releaseProbe(key);
  }

  /** An answer, or a refusal that says nothing about the deployment's health (a 4xx of the request). */
  succeeded(key: string): void {
    const breaker = this.breaker(key);
    if (breaker.coolingUntil !== 0 || breaker.probing) {
      breaker.coolingUntil = 0;
      breaker.probing = false;
      this.reset(breaker);
      this.shared?.releaseProbe(key);
    }
    this.push(breaker, false);
  }

  /**
   * A failed call: errors that fallback would move on from (connection, timeout, 429, 5xx) count toward the
   * threshold; a 429 with Retry-After cools the deployment down at once when the policy honours it.
   */
  failed(key: string, error: unknown): void {
    if (!isDeploymentFailure(error)) {
      this.succeeded(key);
      return;
    }
    const breaker = this.breaker(key);
    const now = this.now();
    const retryAfter = error instanceof RateLimitError && this.policy.honourRetryAfter ? error.retryAfterMs : undefined;
    if (breaker.probing) {
      breaker.probing = false;
      this.shared?.releaseProbe(key);
      this.coolDown(key, breaker, now + (retryAfter ?? this.policy.cooldownMs));
      return;
    }
    this.push(breaker, true);
    if (retryAfter !== undefined) this.coolDown(key, breaker, now + Math.max(retryAfter, 1000));
    else if (breaker.failed >= this.policy.failures) this.coolDown(key, breaker, now + this.policy.cooldownMs);
  }

  /** One deployment's state, cool-down end and failures among its last calls, for /readyz, the CLI and metrics. */
  status(key: string): { state: DeploymentState; coolingUntil: number; recentFailures: number } {
    const breaker = this.breaker(key);
    return { state: this.state(key), coolingUntil: breaker.coolingUntil, recentFailures: breaker.failed };
  }

  close(): Promise<void> {
    return this.shared?.close() ?? Promise.resolve();
  }

  private coolDown(key: string, breaker: Breaker, until: number): void {
    breaker.coolingUntil = Math.max(breaker.coolingUntil, until);
    this.reset(breaker);
    this.shared?.publish(key, breaker.coolingUntil);
  }

  private cooledElsewhere(key: string, until: number): void {
    const breaker = this.breakers.get(key);
    if (!breaker || breaker.probing) return;
    if (until > breaker.coolingUntil) breaker.coolingUntil = until;
  }

  private push(breaker: Breaker, failure: boolean): void {
    const window = this.policy.window;
    if (breaker.outcomes.length < window) breaker.outcomes.push(failure);
    else {
      if (breaker.outcomes[breaker.next]) breaker.failed--;
      breaker.outcomes[breaker.next] = failure;
    }
    breaker.next = (breaker.next + 1) % window;
    if (failure) breaker.failed++;
  }

  private reset(breaker: Breaker): void {
    breaker.outcomes.length = 0;
    breaker.next = 0;
    breaker.failed = 0;
  }

  private breaker(key: string): Breaker {
    let breaker = this.breakers.get(key);
    if (!breaker) {
      breaker = new Breaker();
      this.breakers.set(key, breaker);
    }
    return breaker;
  }
}

/**
 * A failure that is the deployment's, not the request's: what makes a provider fall back, and also a refused
 * credential. Deployments serve one model with their own keys (B18), so an expired key or Entra token on one is
 * that deployment failing: it counts toward its cool-down and the call moves on to the next. Between providers a
 * refused credential stays final (B2): another vendor answering would hide the operator's misconfiguration.
 */
export function isDeploymentFailure(error: unknown): boolean {
  return isFallbackEligible(error) || error instanceof AuthenticationError;
}

/**
 * A timeout the caller's own request can cause, which therefore says nothing of the deployment (B18): a
 * non-streamed generation's answer (its headers come with it) and a stream's first chunk after its headers take
 * as long as the caller asks (max_tokens, reasoning effort, a long prompt). A timeout before the request went
 * out, before a stream's headers (upstreams send them before reading the prompt), of an embedding (no output;
 * its input bounded by the model) or of the transport itself is the deployment's.
 */
export function isCallerShapedTimeout(error: unknown, capability: Capability): boolean {
  if (!(error instanceof TimeoutError) || error.awaiting === undefined || error.awaiting === 'connection') return false;
  if (capability === 'embeddings') return false;
  return capability === 'generate' || error.awaiting === 'body';
}
