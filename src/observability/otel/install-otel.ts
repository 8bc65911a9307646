/**
 * Turns OpenTelemetry on for the served application when `observability.otel` (or OTEL_*) asks for it. The SDK
 * is required only then: with tracing off no OpenTelemetry module is loaded and no hook is installed
 * (docs/operations.md#traces).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OtelSettings } from './otel-settings';

export function installOpenTelemetry(app: NestFastifyApplication, settings: OtelSettings): void {
  if (!settings.enabled) return;
  const runtime = require('./otel-runtime') as typeof import('./otel-runtime');
  runtime.startOpenTelemetry(app, settings);
}
