/**
 * Which provider serves the model a caller names, and which configured equivalents fallback may move the
 * request to (docs/decisions.md B13). Decided before any upstream call, once for every surface.
 */
import { InvalidRequestError, ModelNotFoundError, TollgateError } from '../errors';
import type { AiProvider } from '../providers/ai-provider.interface';
import { Deployment, DeploymentGroup, type DeploymentStrategy } from './deployment-choice';
import type { ProviderRegistry } from './provider-registry';

/** One provider and the model to ask it for; no model means the provider's configured one. */
export interface ModelTarget {
  provider: string;
  model?: string;
}

export interface ModelRoute {
  target: ModelTarget;
  /**
   * Where fallback may go, in order. Undefined when the caller named no model: then the configured
   * fallback providers, each with its own model.
   */
  equivalents?: ModelTarget[];
  /** Set for an alias configured with deployments: the call goes to the one its strategy chooses. */
  deployments?: DeploymentGroup;
}

/** One deployment of an alias: a `registration/model` target, with an optional weight (default 1) and known limits. */
export interface DeploymentTargetSettings {
  target: string;
  weight?: number;
  rpm?: number;
  tpm?: number;
}

/** An alias served by several deployments of one model (docs/decisions.md B18). */
export interface DeploymentAliasSettings {
  /** Default `ordered`. */
  strategy?: DeploymentStrategy;
  deployments: ReadonlyArray<string | DeploymentTargetSettings>;
}

/**
 * `ai.model_aliases`: an alias and the `registration/model` targets it stands for, in fallback order, or its
 * deployments and strategy.
 */
export type ModelAliases = Readonly<Record<string, readonly string[] | DeploymentAliasSettings>>;

export class ModelRouter {
  private readonly aliases = new Map<string, ModelTarget[]>();
  private readonly groups = new Map<string, DeploymentGroup>();
  /** Model name -> the registrations whose configuration names it, default provider first. */
  private readonly servedBy = new Map<string, string[]>();

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly defaultProvider: string,
    aliases: ModelAliases = {},
  ) {
    for (const [alias, setting] of Object.entries(aliases)) {
      if (isDeploymentAlias(setting)) {
        const deployments = setting.deployments.map((entry, index) => {
          const { target, weight, rpm, tpm } = typeof entry === 'string' ? { target: entry } : entry;
          const qualified = this.aliasTarget(`ai.model_aliases.${alias}.deployments[${index}]`, target);
          return new Deployment({ ...qualified, weight: weight ?? 1, ...(rpm !== undefined ? { rpm } : {}), ...(tpm !== undefined ? { tpm } : {}) });
        });
        this.aliases.set(alias, deployments.map(({ provider, model }) => ({ provider, model })));
        this.groups.set(alias, new DeploymentGroup(alias, setting.strategy ?? 'ordered', deployments));
      } else {
        this.aliases.set(
          alias,
          setting.map((target, index) => this.aliasTarget(`ai.model_aliases.${alias}[${index}]`, target)),
        );
      }
    }
    const ordered = [...registry.list()].sort((a, b) => Number(b.name === defaultProvider) - Number(a.name === defaultProvider));
    for (const provider of ordered) {
      for (const model of configuredModels(provider)) {
        const names = this.servedBy.get(model) ?? [];
        if (!names.includes(provider.name)) this.servedBy.set(model, [...names, provider.name]);
      }
    }
  }

  servesModel(provider: string, model: string): boolean {
    return this.servedBy.get(model)?.includes(provider) ?? false;
  }

  /** Alias names, for model listings. */
  aliasNames(): string[] {
    return [...this.aliases.keys()];
  }

  aliasTargets(alias: string): readonly ModelTarget[] | undefined {
    return this.aliases.get(alias);
  }

  /** The aliases configured with deployments. */
  deploymentGroups(): DeploymentGroup[] {
    return [...this.groups.values()];
  }

  /**
   * `provider` is an explicit registration (the REST body's `provider`); `model` may be an alias, a
   * `registration/model`, or a model some registration's configuration names.
   */
  route(provider: string | undefined, model: string | undefined): ModelRoute {
    if (provider !== undefined) {
      this.registry.get(provider);
      return model === undefined ? { target: { provider } } : { target: { provider, model }, equivalents: this.equivalentsOf(provider, model) };
    }
    if (model === undefined) return { target: { provider: this.defaultProvider } };
    const alias = this.aliases.get(model);
    if (alias) {
      const group = this.groups.get(model);
      return group ? { target: alias[0], equivalents: alias.slice(1), deployments: group } : { target: alias[0], equivalents: alias.slice(1) };
    }
    const qualified = this.qualified(model);
    if (qualified) return { target: qualified, equivalents: this.equivalentsOf(qualified.provider, qualified.model) };
    const servers = this.servedBy.get(model);
    if (servers) {
      const [first, ...others] = servers.map((name) => ({ provider: name, model }));
      return { target: first, equivalents: distinct([...others, ...this.equivalentsOf(first.provider, model)]) };
    }
    throw new ModelNotFoundError(
      `model '${model}' is not served by any configured provider: write it as '<provider>/${model}' with a registered provider ` +
        `(${this.registry.names().join(', ') || 'none'}), or name it in that provider's models`,
    );
  }

  /** `registration/model` for a registered name; undefined when the text before the first `/` is none. */
  private qualified(model: string): Required<ModelTarget> | undefined {
    const slash = model.indexOf('/');
    if (slash <= 0 || !this.registry.has(model.slice(0, slash))) return undefined;
    const name = model.slice(slash + 1);
    if (name === '') throw new InvalidRequestError(`model names provider '${model.slice(0, slash)}' but no model after the '/'`, { param: 'model' });
    return { provider: model.slice(0, slash), model: name };
  }

  /** The other targets of every alias that lists this provider and model. */
  private equivalentsOf(provider: string, model: string): ModelTarget[] {
    const self: ModelTarget = { provider, model };
    const listing = [...this.aliases.values()].filter((targets) => targets.some((target) => sameTarget(target, self)));
    return distinct(listing.flat().filter((target) => !sameTarget(target, self)));
  }

  private aliasTarget(path: string, target: string): Required<ModelTarget> {
    const qualified = this.qualified(target);
    if (!qualified) {
      throw new TollgateError(
        `${path}: '${target}' must be '<provider>/<model>' with a registered provider (${this.registry.names().join(', ') || 'none'})`,
      );
    }
    return qualified;
  }
}

function isDeploymentAlias(setting: readonly string[] | DeploymentAliasSettings): setting is DeploymentAliasSettings {
  return !Array.isArray(setting);
}

/** The models a registration's configuration names: its chat and embedding models and its `models` list. */
function configuredModels(provider: AiProvider): string[] {
  const described = provider.describe();
  const models = [described.chatModel, described.embeddingModel, ...(Array.isArray(described.models) ? described.models : [])];
  return models.filter((model): model is string => typeof model === 'string' && model !== '');
}

const sameTarget = (a: ModelTarget, b: ModelTarget) => a.provider === b.provider && a.model === b.model;

function distinct(targets: ModelTarget[]): ModelTarget[] {
  return targets.filter((target, index) => targets.findIndex((other) => sameTarget(other, target)) === index);
}
