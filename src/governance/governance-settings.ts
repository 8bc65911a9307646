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
  /** JWT roles that administer their own tenant's keys and usage (none by default: an operator names them). */
  adminRoles: readonly string[];
  /** JWT roles that administer every tenant's. */
  operatorRoles?: readonly string[];
  models: ModelAllowListSettings;
}

/** No role administers until the configuration names one: `admin` is what identity providers call a tenant's own administrator. */
export const DEFAULT_ADMIN_ROLES: readonly string[] = [];

export const GOVERNANCE_DEFAULTS: Readonly<GovernanceSettings> = Object.freeze<GovernanceSettings>({
  keys: { kind: 'memory' },
  adminRoles: DEFAULT_ADMIN_ROLES,
  operatorRoles: [],
  models: { tenants: {}, roles: {} },
});

export const GOVERNANCE_SETTINGS = Symbol('tollgate:governance-settings');
