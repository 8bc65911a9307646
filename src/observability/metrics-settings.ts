import type { ConfigDocument } from '../config/config.types';

export interface MetricsSettings {
  /** Serve GET /metrics (Prometheus text format). */
  enabled: boolean;
  /** When set, /metrics needs `Authorization: Bearer <token>`; unset, it is open like /healthz. */
  token?: string;
}

export const DEFAULT_METRICS_SETTINGS: MetricsSettings = { enabled: true };

export function toMetricsSettings(document: ConfigDocument): MetricsSettings {
  const section = document.metrics ?? {};
  return {
    enabled: section.enabled ?? DEFAULT_METRICS_SETTINGS.enabled,
    ...(section.token !== undefined ? { token: section.token } : {}),
  };
}
