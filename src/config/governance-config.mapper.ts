import { modelGlobListProblems } from '../governance/allow-lists/model-glob';
import { DEFAULT_ADMIN_ROLES, type GovernanceSettings } from '../governance/governance-settings';
import { API_KEY_PREFIX } from '../http/api-auth.guard';
import { DEFAULT_KEYS_REDIS_PREFIX, DEFAULT_KEYS_TABLE, type KeyStoreSettings } from '../governance/keys/key-store';
import { ConfigError } from './config.error';
import type { ConfigDocument, GovernanceSection } from './config.types';

/** The keys part of the `governance:` section; cross-key rules the schema cannot state are refused here, each naming its key. */
export function toGovernanceSettings(document: ConfigDocument, source: string): GovernanceSettings {
  const governance: GovernanceSection = document.governance ?? {};
  const problems: string[] = [];
  const keys = toKeyStore(governance.keys ?? {}, problems);
  const apiToken = document.api?.token;
  if (apiToken?.startsWith(API_KEY_PREFIX)) problems.push(`api.token: must not start with ${API_KEY_PREFIX} (reserved for API keys)`);
  const adminToken = governance.admin_token;
  if (adminToken?.startsWith(API_KEY_PREFIX)) problems.push(`governance.admin_token: must not start with ${API_KEY_PREFIX} (reserved for API keys)`);
  if (adminToken !== undefined && adminToken === apiToken) problems.push('governance.admin_token: must differ from api.token');
  const tenants = governance.models?.tenants ?? {};
  const roles = governance.models?.roles ?? {};
  for (const [kind, lists] of [['tenants', tenants], ['roles', roles]] as const) {
    for (const [name, globs] of Object.entries(lists)) problems.push(...modelGlobListProblems(`governance.models.${kind}.${name}`, globs));
  }
  if (problems.length) throw new ConfigError(problems.map((problem) => `${source}: ${problem}`));
  return {
    keys,
    ...(adminToken !== undefined ? { adminToken } : {}),
    adminRoles: governance.admin_roles ?? DEFAULT_ADMIN_ROLES,
    operatorRoles: governance.operator_roles ?? [],
    models: { tenants, roles },
  };
}

function toKeyStore(section: NonNullable<GovernanceSection['keys']>, problems: string[]): KeyStoreSettings {
  const store = section.store ?? 'memory';
  const url = section.url;
  if (store !== 'redis' && section.key_prefix !== undefined) problems.push('governance.keys.key_prefix: applies to store redis only');
  if (store !== 'postgres' && section.table !== undefined) problems.push('governance.keys.table: applies to store postgres only');
  if (store === 'memory') {
    if (url !== undefined) problems.push('governance.keys.url: applies to store redis or postgres only');
    return { kind: 'memory' };
  }
  const scheme = store === 'redis' ? /^rediss?:\/\// : /^postgres(ql)?:\/\//;
  if (url === undefined) problems.push(`governance.keys.url: is required for store ${store}`);
  else if (!scheme.test(url)) problems.push(`governance.keys.url: must be a ${store === 'redis' ? 'redis://' : 'postgres://'} URL for store ${store}`);
  return store === 'redis'
    ? { kind: 'redis', url: url ?? '', keyPrefix: section.key_prefix ?? DEFAULT_KEYS_REDIS_PREFIX }
    : { kind: 'postgres', url: url ?? '', table: section.table ?? DEFAULT_KEYS_TABLE };
}
