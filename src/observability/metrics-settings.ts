import type { ConfigDocument } from '../config/config.types';

export interface MetricsSettings {
  /** Serve GET /metrics (Prometheus text format). */
  enabled: boolean;
  /** When set, /metrics needs `Authorization: Bearer <token>`; unset, it is open like /healthz. */
  token?: string;
}

export const DEFAULT_METRICS_SETTINGS: MetricsSettings = { enabled: true };

export const METRICS_SETTINGS = Symbol('tollgate:metrics-settings');

/**
 * The `tenant` label of the ledger's series on a /metrics without a token: its figures summed over every tenant,
 * so that whoever can reach the port learns no tenant's name, spend, tokens or models (docs/governance.md#metrics).
 */
export const ALL_TENANTS_LABEL = 'all';

export function toMetricsSettings(document: ConfigDocument): MetricsSettings {
  const section = document.metrics ?? {};
  return {
    enabled: section.enabled ?? DEFAULT_METRICS_SETTINGS.enabled,
    ...(section.token !== undefined ? { token: section.token } : {}),
  };
}
