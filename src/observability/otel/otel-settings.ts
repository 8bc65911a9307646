/**
 * `observability.otel` and the standard OTEL_* variables, resolved into what the server needs to decide whether
 * OpenTelemetry is loaded at all (docs/operations.md#traces). This file imports nothing of OpenTelemetry.
 */
import type { ConfigDocument } from '../../config/config.types';

export interface OtelSettings {
  enabled: boolean;
  /** The collector's base URL; unset: the exporters read OTEL_EXPORTER_OTLP_* themselves. */
  endpoint?: string;
  /** Unset: the exporters read OTEL_EXPORTER_OTLP_HEADERS themselves. */
  headers?: Record<string, string>;
  /** Unset: the SDK reads OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (default: every trace). */
  samplingRatio?: number;
  captureContent: boolean;
  serviceName: string;
  metrics: boolean;
  metricsIntervalMs: number;
}

const DEFAULT_SERVICE_NAME = 'tollgate';
const DEFAULT_METRICS_INTERVAL_S = 60;

const isSet = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

export function toOtelSettings(document: ConfigDocument, env: NodeJS.ProcessEnv = process.env): OtelSettings {
  const section = document.observability?.otel ?? {};
  const endpointKnown = section.endpoint !== undefined || isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  // OTEL_SDK_DISABLED is the specification's switch for every SDK; it wins over the file.
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  return {
    enabled: !disabled && (section.enabled ?? endpointKnown),
    ...(section.endpoint !== undefined ? { endpoint: section.endpoint.replace(/\/+$/, '') } : {}),
    ...(section.headers !== undefined ? { headers: section.headers } : {}),
    ...(section.sampling_ratio !== undefined ? { samplingRatio: section.sampling_ratio } : {}),
    captureContent: section.capture_content ?? env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
    serviceName: section.service_name ?? (isSet(env.OTEL_SERVICE_NAME) ? env.OTEL_SERVICE_NAME : DEFAULT_SERVICE_NAME),
    metrics: section.metrics ?? true,
    metricsIntervalMs: (section.metrics_interval ?? DEFAULT_METRICS_INTERVAL_S) * 1000,
  };
}
