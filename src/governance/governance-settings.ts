import type { KeyStoreSettings } from './keys/key-store';

/** Model allow-lists of `governance.models`: globs on provider/model per tenant id and per JWT role. */
export interface ModelAllowListSettings {
  tenants: Readonly<Record<string, readonly string[]>>;
  roles: Readonly<Record<string, readonly string[]>>;
}

/** The keys slice of the `governance:` section, mapped (src/config/governance-config.mapper.ts). */
export interface GovernanceSettings {
  keys: KeyStoreSettings;
  /** Bearer token that administers governance (keys, budgets); unset means only JWT admin roles do. */
  adminToken?: string;
  /** JWT roles that administer governance. */
  adminRoles: readonly string[];
  models: ModelAllowListSettings;
}

export const DEFAULT_ADMIN_ROLES: readonly string[] = ['admin'];

export const GOVERNANCE_DEFAULTS: Readonly<GovernanceSettings> = Object.freeze<GovernanceSettings>({
  keys: { kind: 'memory' },
  adminRoles: DEFAULT_ADMIN_ROLES,
  models: { tenants: {}, roles: {} },
});

export const GOVERNANCE_SETTINGS = Symbol('tollgate:governance-settings');
