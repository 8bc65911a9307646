import { Inject, Injectable } from '@nestjs/common';
import { ModelNotAllowedError } from '../governance-errors';
import type { GovernanceRequestState } from '../governance-identity';
import { GOVERNANCE_SETTINGS, type GovernanceSettings, type ModelAllowListSettings } from '../governance-settings';
import { apiKeyOf } from '../governance-state';
import { anyGlobMatches } from './model-glob';

/**
 * The allow-lists that apply to a caller, each a list of globs; a model must match at least one glob of
 * EVERY list (docs/decisions.md, governance). The lists: the key's own, the tenant's, and one list made of
 * the caller's roles that have one (united: a role grants models, so a user with two roles may use what
 * either allows). No list at all means every model is allowed.
 */
export function allowedModelsFor(state: GovernanceRequestState, settings: Pick<GovernanceSettings, 'models'>): ReadonlyArray<readonly string[]> {
  const lists: Array<readonly string[]> = [];
  const keyModels = apiKeyOf(state)?.models;
  if (keyModels) lists.push(keyModels);
  const { tenant, roles } = state.identity;
  const tenantModels = tenant === null ? undefined : ownEntry(settings.models.tenants, tenant);
  if (tenantModels) lists.push(tenantModels);
  const roleModels = roles.flatMap((role) => ownEntry(settings.models.roles, role) ?? []);
  if (roles.some((role) => ownEntry(settings.models.roles, role) !== undefined)) lists.push(roleModels);
  return lists;
}

export function isModelAllowed(lists: ReadonlyArray<readonly string[]>, provider: string, model: string): boolean {
  const name = `${provider}/${model}`;
  return lists.every((globs) => anyGlobMatches(globs, name));
}

/** `hasOwnProperty`, so a tenant or role named `constructor` or `__proto__` finds nothing it did not set. */
function ownEntry(entries: ModelAllowListSettings['tenants'], name: string): readonly string[] | undefined {
  return Object.prototype.hasOwnProperty.call(entries, name) ? entries[name] : undefined;
}

/** Enforcement for the request path: refuses, before any upstream call, a model the caller may not use. */
@Injectable()
export class ModelAllowList {
  constructor(@Inject(GOVERNANCE_SETTINGS) private readonly settings: GovernanceSettings) {}

  /** Throws ModelNotAllowedError (403 `model_not_allowed`); a request without governance state is not restricted. */
  checkModelAllowed(state: GovernanceRequestState | undefined, provider: string, model: string): void {
    if (state && !isModelAllowed(allowedModelsFor(state, this.settings), provider, model)) throw new ModelNotAllowedError(`${provider}/${model}`);
  }
}
