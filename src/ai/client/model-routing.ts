/**
 * Which provider serves the model a caller names, and which configured equivalents fallback may move the
 * request to (docs/decisions.md B13). Decided before any upstream call, once for every surface.
 */
import { InvalidRequestError, ModelNotFoundError, TollgateError } from '../errors';
import type { AiProvider } from '../providers/ai-provider.interface';
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
}

/** `ai.model_aliases`: an alias and the `registration/model` targets it stands for, in fallback order. */
export type ModelAliases = Readonly<Record<string, readonly string[]>>;

export class ModelRouter {
  private readonly aliases = new Map<string, ModelTarget[]>();
  /** Model name -> the registrations whose configuration names it, default provider first. */
  private readonly servedBy = new Map<string, string[]>();

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly defaultProvider: string,
    aliases: ModelAliases = {},
  ) {
    for (const [alias, targets] of Object.entries(aliases)) {
      this.aliases.set(
        alias,
        targets.map((target, index) => this.aliasTarget(alias, index, target)),
      );
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
    if (alias) return { target: alias[0], equivalents: alias.slice(1) };
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

  private aliasTarget(alias: string, index: number, target: string): Required<ModelTarget> {
    const qualified = this.qualified(target);
    if (!qualified) {
      throw new TollgateError(
        `ai.model_aliases.${alias}[${index}]: '${target}' must be '<provider>/<model>' with a registered provider (${this.registry.names().join(', ') || 'none'})`,
      );
    }
    return qualified;
  }
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
