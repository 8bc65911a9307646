/**
 * The choose-a-deployment stage of the call path (docs/decisions.md B18): an alias configured with
 * `deployments` names one model served by several deployments (registrations and models), and each call is sent
 * to one of them by the alias's strategy; the others, in configured order, are where the call falls back. A
 * deployment cooling down is skipped (deployment-health.ts), one past its cool-down gets the probe, and one near
 * its known RPM/TPM is passed over before the provider answers 429.
 */
import { NoHealthyDeploymentError } from '../errors';
import type { Capability } from './call-features';
import { type DeploymentHealth, isCallerShapedTimeout } from './deployment-health';
import { sleepFor, type Sleep } from './retry';

export const DEPLOYMENT_STRATEGIES = ['ordered', 'weighted', 'least-busy', 'lowest-latency'] as const;
export type DeploymentStrategy = (typeof DEPLOYMENT_STRATEGIES)[number];

/** The share of a known RPM or TPM from which a deployment is passed over for one with room. */
export const NEAR_LIMIT = 0.9;
/** Weight of the newest time-to-first-token sample in the moving average. */
export const LATENCY_SMOOTHING = 0.2;

/** One deployment as configured: a `registration/model` target, its weight and the limits it is known to have. */
export interface DeploymentSettings {
  provider: string;
  model: string;
  weight: number;
  rpm?: number;
  tpm?: number;
}

/** One deployment and what this process knows of it: calls in flight, latency, this minute's requests and tokens. */
export class Deployment {
  readonly key: string;
  inFlight = 0;
  /** Moving average of the time to first token (a whole answer when not streamed), ms; undefined until measured. */
  latencyMs?: number;
  private minute = 0;
  private requests = 0;
  private tokens = 0;

  constructor(readonly settings: Readonly<DeploymentSettings>) {
    this.key = `${settings.provider}/${settings.model}`;
  }

  get provider(): string {
    return this.settings.provider;
  }

  get model(): string {
    return this.settings.model;
  }

  /** Whether this minute's requests or tokens reached {@link NEAR_LIMIT} of the known RPM or TPM. */
  nearLimit(now: number): boolean {
    const { rpm, tpm } = this.settings;
    if (rpm === undefined && tpm === undefined) return false;
    this.roll(now);
    return (rpm !== undefined && this.requests >= rpm * NEAR_LIMIT) || (tpm !== undefined && this.tokens >= tpm * NEAR_LIMIT);
  }

  countRequest(now: number): void {
    this.roll(now);
    this.requests++;
  }

  countTokens(tokens: number, now: number): void {
    this.roll(now);
    this.tokens += tokens;
  }

  observeLatency(ms: number): void {
    this.latencyMs = this.latencyMs === undefined ? ms : this.latencyMs + LATENCY_SMOOTHING * (ms - this.latencyMs);
  }

  private roll(now: number): void {
    const minute = Math.floor(now / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.requests = 0;
      this.tokens = 0;
    }
  }
}

/** An alias's deployments and how a call picks among them. */
export class DeploymentGroup {
  constructor(
    readonly alias: string,
    readonly strategy: DeploymentStrategy,
    readonly deployments: readonly Deployment[],
  ) {}
}

/**
 * The deployments of `group` a caller may reach (its allow-lists; a priced model for a dollar budget), so the
 * strategy picks among those instead of picking one the gate then refuses while another serves the alias. All of
 * them when it may reach every one or none (then the gate refuses the call, naming the one picked).
 */
export function reachableDeployments(group: DeploymentGroup, admits: (deployment: Deployment) => boolean): DeploymentGroup {
  const reachable = group.deployments.filter(admits);
  return reachable.length === 0 || reachable.length === group.deployments.length ? group : new DeploymentGroup(group.alias, group.strategy, reachable);
}

export interface ChooserSeams {
  random?: () => number;
  now?: () => number;
  sleep?: Sleep;
}

export class DeploymentChooser {
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly sleep: Sleep;

  constructor(
    readonly health: DeploymentHealth,
    /** How long a call whose every deployment cools down may wait for the first to come back; 0 refuses at once. */
    private readonly waitMs: number,
    seams: ChooserSeams = {},
  ) {
    this.random = seams.random ?? Math.random;
    this.now = seams.now ?? Date.now;
    this.sleep = seams.sleep ?? sleepFor;
  }

  /**
   * The deployments to try, in order: the one the strategy picks (or the one due a probe), then the others that
   * take traffic in configured order, those near their limits last. Refuses with 503 `no_healthy_deployment` when
   * every one cools down (after waiting for the first to come back, when allowed). Synchronous unless a probe is
   * claimed or a wait is needed, so the usual call awaits no promise here.
   */
  choose(group: DeploymentGroup, signal?: AbortSignal): Deployment[] | Promise<Deployment[]> {
    const now = this.now();
    let open: Deployment[] | undefined;
    let near: Deployment[] | undefined;
    let pastCooldown = false;
    for (const deployment of group.deployments) {
      const until = this.health.coolingUntil(deployment.key);
      if (until === 0) {
        if (deployment.nearLimit(now)) (near ??= []).push(deployment);
        else (open ??= []).push(deployment);
      } else if (until <= now) {
        pastCooldown = true;
      }
    }
    if (pastCooldown) return this.chooseWithProbe(group, signal);
    if (open) {
      pickFirst(open, group, this.random);
      return near ? [...open, ...near] : open;
    }
    if (near) {
      pickFirst(near, group, this.random);
      return near;
    }
    return this.waitOrRefuse(group, now, signal);
  }

  /** As {@link choose}, when a deployment is past its cool-down: the call that claims its probe sends it first. */
  private async chooseWithProbe(group: DeploymentGroup, signal?: AbortSignal): Promise<Deployment[]> {
    const now = this.now();
    const open: Deployment[] = [];
    const near: Deployment[] = [];
    let probe: Deployment | undefined;
    for (const deployment of group.deployments) {
      const until = this.health.coolingUntil(deployment.key);
      if (until === 0) (deployment.nearLimit(now) ? near : open).push(deployment);
      else if (until <= now && probe === undefined && (await this.health.claimProbe(deployment.key))) probe = deployment;
    }
    if (open.length > 0) pickFirst(open, group, this.random);
    else if (near.length > 0) pickFirst(near, group, this.random);
    const order = probe ? [probe, ...open, ...near] : [...open, ...near];
    return order.length > 0 ? order : this.waitOrRefuse(group, now, signal);
  }

  /** Every deployment cools down (or another call probes it): wait for the first when allowed, else 503. */
  private async waitOrRefuse(group: DeploymentGroup, now: number, signal?: AbortSignal): Promise<Deployment[]> {
    let earliest = Infinity;
    for (const deployment of group.deployments) {
      const until = this.health.coolingUntil(deployment.key);
      // A deployment whose probe is out (here or in another process) is due back within about a second.
      earliest = Math.min(earliest, until > now ? until : now + 1000);
    }
    const waitMs = earliest - now;
    if (waitMs > this.waitMs) {
      throw new NoHealthyDeploymentError(
        `every deployment of '${group.alias}' is cooling down after failures; the first takes traffic again in ${Math.ceil(waitMs / 1000)} s`,
        { retryAfterMs: waitMs },
      );
    }
    await this.sleep(waitMs, signal);
    return this.choose(group, signal);
  }

  /**
   * One try on a deployment: counted in flight and against its minute, timed, and its outcome told to the
   * breaker. `holdOpen` keeps an answered try in flight until {@link release} (a stream, until it ends). A try
   * its caller aborted, or one that timed out as the caller's request can make it ({@link isCallerShapedTimeout}),
   * says nothing of the deployment: not a failure, nor an answer that would close a breaker whose probe it was.
   */
  async track<T>(deployment: Deployment, attempt: () => Promise<T>, capability: Capability, signal?: AbortSignal): Promise<T> {
    const holdOpen = capability === 'streaming';
    deployment.inFlight++;
    // A probe is claimed before its try starts, and no other try starts on the deployment while it is out.
    const probe = this.health.state(deployment.key) === 'probing';
    const started = performance.now();
    deployment.countRequest(this.now());
    try {
      const answer = await attempt();
      deployment.observeLatency(performance.now() - started);
      this.health.succeeded(deployment.key);
      if (!holdOpen) deployment.inFlight--;
      return answer;
    } catch (error) {
      deployment.inFlight--;
      if (!signal?.aborted && !isCallerShapedTimeout(error, capability)) this.health.failed(deployment.key, error);
      else if (probe) this.health.unclaimProbe(deployment.key);
      throw error;
    }
  }

  /** The call that claimed `deployment`'s probe ended before trying it: the probe goes back. */
  untried(deployment: Deployment): void {
    this.health.unclaimProbe(deployment.key);
  }

  release(deployment: Deployment): void {
    deployment.inFlight--;
  }

  /** Whether a try's failure cooled the deployment down: its retries stop, and the call moves on. */
  cooling(deployment: Deployment): boolean {
    return this.health.coolingUntil(deployment.key) > this.now();
  }
}

/** Moves the strategy's pick to the front of `candidates` (the others keep their configured order). */
function pickFirst(candidates: Deployment[], group: DeploymentGroup, random: () => number): void {
  if (candidates.length < 2) return;
  let picked = 0;
  switch (group.strategy) {
    case 'ordered':
      return;
    case 'weighted': {
      let total = 0;
      for (const deployment of candidates) total += deployment.settings.weight;
      let point = random() * total;
      for (picked = 0; picked < candidates.length - 1; picked++) {
        point -= candidates[picked].settings.weight;
        if (point < 0) break;
      }
      break;
    }
    case 'least-busy':
      for (let index = 1; index < candidates.length; index++) if (candidates[index].inFlight < candidates[picked].inFlight) picked = index;
      break;
    case 'lowest-latency':
      // An unmeasured deployment goes first, so every one is measured.
      for (let index = 1; index < candidates.length; index++) if ((candidates[index].latencyMs ?? -1) < (candidates[picked].latencyMs ?? -1)) picked = index;
      break;
  }
  if (picked > 0) candidates.unshift(...candidates.splice(picked, 1));
}
