/**
 * One model call as a pipeline of stages, in order (docs/architecture.md#the-call-path):
 * route (model-routing.ts) -> choose a deployment (deployment-choice.ts, for an alias with deployments) ->
 * gate (call-features.ts, call-admission.ts) -> attempt with retry (retried-attempt.ts, retry.ts) -> fall back
 * (fallback.ts); measuring and recording (call-recording.ts, stream-relay.ts) wrap each attempt's upstream call,
 * which the caller of {@link CallPipeline.run} supplies.
 */
import type { AiProvider, ModelFeature, NativeRequest } from '../providers/ai-provider.interface';
import { type Admission, admit, closeUnanswered, type GateRequest, UNGATED_ATTEMPT } from './call-admission';
import { assertServes, type Capability, configuredModel } from './call-features';
import { type Deployment, type DeploymentChooser, reachableDeployments } from './deployment-choice';
import { type Candidate, deploymentCandidates, fallBack, fallbackCandidates, type FallbackPolicy, mayFallBack } from './fallback';
import type { ModelCallGate } from './model-call-gate';
import type { ModelRouter } from './model-routing';
import type { ProviderRegistry } from './provider-registry';
import type { RetriedAttempts } from './retried-attempt';
import type { AttemptOptions } from './sent-attempts';
import type { ServiceOperation } from './service-request.events';

/** One call to run: what it needs of a provider, and the upstream call of one attempt. */
export interface PipelineCall<T> {
  capability: Capability;
  operation: ServiceOperation;
  options: { provider?: string; model?: string; enableFallback?: boolean; signal?: AbortSignal };
  /** One attempt's upstream call on `provider` for `model` (undefined: the provider's configured one). */
  call: (provider: AiProvider, model: string | undefined, attempt: AttemptOptions) => Promise<T>;
  features?: readonly ModelFeature[];
  /** The caller's request in a provider's dialect: one with a field only that dialect has goes to no other provider. */
  native?: NativeRequest;
  /** Set when the call passes the gate. */
  gated?: GateRequest;
}

/** The answer, who gave it, and the admission whose ticket the caller closes with what the call cost. */
export interface Answered<T> extends Admission {
  result: T;
  provider: AiProvider;
  /** The deployment that answered, for a call to an alias with deployments. */
  deployment?: Deployment;
}

const NO_FEATURES: readonly ModelFeature[] = [];

export class CallPipeline {
  /** Governance's allow-list and budget check before every call (docs/governance.md#enforcement). */
  gate?: ModelCallGate;

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly router: ModelRouter,
    private readonly fallback: FallbackPolicy,
    private readonly attempts: RetriedAttempts,
    /** Set when some alias has deployments. */
    private readonly chooser?: DeploymentChooser,
  ) {}

  async run<T>(call: PipelineCall<T>): Promise<Answered<T>> {
    const { options, capability, operation, gated } = call;
    const features = call.features ?? NO_FEATURES;
    const route = this.router.route(options.provider, options.model);
    const chooser = this.chooser;
    const gate = this.gate;
    const group =
      route.deployments && gate && gated
        ? reachableDeployments(route.deployments, (deployment) => {
            const provider = this.registry.get(deployment.provider);
            return gate.admits(provider.name, configuredModel(provider, deployment.model, gated.setting), provider.kind);
          })
        : route.deployments;
    const choice = group && chooser ? chooser.choose(group, options.signal) : undefined;
    const order = choice instanceof Promise ? await choice : choice;
    const chosen = order?.[0];
    // The chooser puts a deployment whose probe this call claimed first.
    const probe = chosen && chooser && chooser.health.state(chosen.key) === 'probing' ? chosen : undefined;
    const model = chosen ? chosen.model : route.target.model;
    const primary = this.registry.get(chosen ? chosen.provider : route.target.provider);
    let admission: Admission;
    try {
      assertServes(primary, capability, features, model, call.native);
      const admitted = admit(gate, primary, model, gated);
      admission = admitted instanceof Promise ? await admitted : admitted;
    } catch (error) {
      // A refusal before the first attempt must not keep a probe the chooser claimed for this call.
      if (probe && chooser) chooser.untried(probe);
      throw error;
    }
    const { attempts } = admission;
    const tryOn = (provider: AiProvider, model: string | undefined, deployment?: Deployment): Promise<T> => {
      const upstream = () =>
        attempts ? attempts.run(provider, model, options.signal, (sending) => call.call(provider, model, sending)) : call.call(provider, model, UNGATED_ATTEMPT);
      if (!deployment || !chooser) return this.attempts.run(provider, operation, options.signal, upstream);
      return this.attempts.run(
        provider,
        operation,
        options.signal,
        () => chooser.track(deployment, upstream, capability, options.signal),
        () => chooser.cooling(deployment),
      );
    };
    try {
      const result = await tryOn(primary, model, chosen);
      return chosen ? { result, provider: primary, deployment: chosen, ...admission } : { result, provider: primary, ...admission };
    } catch (error) {
      if (!mayFallBack(this.fallback, options.enableFallback, error, order !== undefined)) {
        closeUnanswered(admission);
        throw error;
      }
      try {
        const answered = await fallBack({
          error,
          from: primary,
          candidates: order
            ? deploymentCandidates(this.registry, order, capability, features, call.native)
            : fallbackCandidates(this.registry, this.fallback, route, capability, features, call.native),
          operation,
          signal: options.signal,
          admits: ({ provider, model }: Candidate) => !gate || !gated || gate.admits(provider.name, configuredModel(provider, model, gated.setting), provider.kind),
          tryCandidate: ({ provider, model, deployment }: Candidate) => tryOn(provider, model, deployment),
        });
        return { ...answered, ...admission };
      } catch (failure) {
        closeUnanswered(admission);
        throw failure;
      }
    }
  }

  /** A call to a deployment ended: its tokens count toward the known TPM, and a held stream leaves the in-flight count. */
  finished(deployment: Deployment | undefined, tokens: number | undefined, held: boolean): void {
    if (!deployment || !this.chooser) return;
    if (tokens !== undefined) deployment.countTokens(tokens, Date.now());
    if (held) this.chooser.release(deployment);
  }
}
