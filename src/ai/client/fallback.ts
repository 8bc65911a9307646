/**
 * The fall-back stage of the call path (docs/decisions.md B2): after the routed provider failed with a
 * fallback-eligible error, each candidate that can take the call is tried in turn. A candidate's own failure of
 * any kind moves on to the next; when every one fails, the first provider's error is the one reported.
 */
import { isFallbackEligible } from '../errors';
import type { AiProvider, ModelFeature, NativeRequest } from '../providers/ai-provider.interface';
import { type Capability, canServe } from './call-features';
import type { Deployment } from './deployment-choice';
import { isDeploymentFailure } from './deployment-health';
import type { ModelRoute, ModelTarget } from './model-routing';
import type { ProviderRegistry } from './provider-registry';
import { publishProviderFallback, type ServiceOperation } from './service-request.events';

export interface FallbackPolicy {
  /** Global switch; a call can still turn fallback off for itself. */
  enabled: boolean;
  /** Ordered candidates of a call that names no model; unset means every registered provider in registration order. */
  providers?: string[];
}

export interface Candidate {
  provider: AiProvider;
  model?: string;
  /** The deployment of an alias with deployments this candidate is. */
  deployment?: Deployment;
}

/** Whether a failure of the routed provider may move the call on; between deployments, see {@link isDeploymentFailure}. */
export function mayFallBack(policy: FallbackPolicy, enableFallback: boolean | undefined, error: unknown, betweenDeployments = false): boolean {
  return enableFallback !== false && policy.enabled && (betweenDeployments ? isDeploymentFailure(error) : isFallbackEligible(error));
}


/** The deployments after the chosen one, in the chooser's order, that can take the call. */
export function deploymentCandidates(
  registry: ProviderRegistry,
  order: readonly Deployment[],
  capability: Capability,
  features: readonly ModelFeature[],
  native?: NativeRequest,
): Candidate[] {
  const candidates: Candidate[] = [];
  for (let index = 1; index < order.length; index++) {
    const deployment = order[index];
    const provider = registry.get(deployment.provider);
    if (canServe(provider, capability, features, deployment.model, native)) candidates.push({ provider, model: deployment.model, deployment });
  }
  return candidates;
}

/**
 * Candidates with the capability and every feature the request needs, judged on the model each would be asked
 * for: the route's equivalents, or the configured fallback providers when the caller named no model.
 */
export function fallbackCandidates(
  registry: ProviderRegistry,
  policy: FallbackPolicy,
  route: ModelRoute,
  capability: Capability,
  features: readonly ModelFeature[],
  native?: NativeRequest,
): Candidate[] {
  const targets: ModelTarget[] =
    route.equivalents ?? (policy.providers ?? registry.names()).filter((name) => name !== route.target.provider).map((name) => ({ provider: name }));
  return targets
    .map((target) => ({ provider: registry.get(target.provider), model: target.model }))
    .filter(({ provider, model }) => canServe(provider, capability, features, model, native));
}

export interface FallbackRun<T> {
  /** The routed provider's failure: reported when no candidate answers. */
  error: unknown;
  from: AiProvider;
  candidates: readonly Candidate[];
  operation: ServiceOperation;
  signal?: AbortSignal;
  /** Whether the gate lets the call move to this candidate (governance's allow-lists). */
  admits: (candidate: Candidate) => boolean;
  tryCandidate: (candidate: Candidate) => Promise<T>;
}

/** The first candidate's answer, in order; rethrows `error` when none answers or the caller left. */
export async function fallBack<T>(run: FallbackRun<T>): Promise<{ result: T; provider: AiProvider; deployment?: Deployment }> {
  for (const candidate of run.candidates) {
    if (run.signal?.aborted) break;
    if (!run.admits(candidate)) continue;
    publishProviderFallback(run.from.name, candidate.provider.name, run.operation);
    try {
      const result = await run.tryCandidate(candidate);
      return candidate.deployment ? { result, provider: candidate.provider, deployment: candidate.deployment } : { result, provider: candidate.provider };
    } catch {
      // Any failure of a fallback candidate moves on to the next one (docs/decisions.md B2).
    }
  }
  throw run.error;
}
