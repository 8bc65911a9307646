import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AiClient } from '../ai/client/ai-client';
import { DIALECT_ERROR_SHAPES } from '../ai/http/dialect-error-shapes';
import { ApiExceptionFilter } from '../http/api-exception.filter';
import { installRequestIdHeader, requestIdAdapterOptions } from '../http/request-id';
import type { TollgateConfig } from '../config/config.types';
import { installApiPreAuth } from './api-pre-auth';
import { installGracefulShutdown } from './graceful-shutdown';
import { collectGarbageOnceIdle } from './idle-collection';
import { useBoundedJsonParser, useChatBodyLimit } from './json-body-parser';
import { installHttpMetrics } from '../observability/http-metrics';
import { defaultLogLevel, ServerLogging, type LogOutput } from '../observability/logging';
import { MetricsService } from '../observability/metrics.service';
import { toMetricsSettings } from '../observability/metrics-settings';
import { installOpenApi } from '../observability/openapi';
import { installOpenTelemetry } from '../observability/otel/install-otel';
import { toOtelSettings } from '../observability/otel/otel-settings';
import { installUsagePage } from '../governance/ledger/usage-page';
import { installCallContextHook } from '../governance/call-context';
import { checkServerStores } from '../config/server-start-checks';
import { HttpRootModule } from './http-root.module';
import { logStartupSummary } from './startup-summary';

/**
 * Builds the HTTP application without listening (tests inject requests into it): request ids on every
 * response, the JSON error envelope for every error (404, 405, 413 included), the API credential checked
 * before the body is read (api-pre-auth.ts), JSON bodies nested at most MAX_JSON_DEPTH levels and holding at
 * most `server.json_value_limit` values (400 before parsing), routes under `base_path`, JSON logs (`logs`:
 * stdout by default, `false` silences them), /metrics, OpenTelemetry traces when configured, and the OpenAPI
 * document at /docs.
 */
export async function createHttpApp(config: TollgateConfig, logs: LogOutput = {}): Promise<NestFastifyApplication> {
  const metrics = toMetricsSettings(config.document);
  const logging = logs === false ? undefined : new ServerLogging(withLogDefaults(logs, config));
  const app = await NestFactory.create<NestFastifyApplication>(
    HttpRootModule.forRoot(config, metrics),
    // While draining, graceful-shutdown.ts answers 503 in the error envelope instead of Fastify's own body.
    new FastifyAdapter({ bodyLimit: config.server.bodyLimit, return503OnClosing: false, ...requestIdAdapterOptions }),
    // An explicit logger: the CLI context that runs `tollgate serve` silenced the default one.
    logs === false ? { logger: false } : { bufferLogs: true },
  );
  const fastify = app.getHttpAdapter().getInstance();
  if (logging) {
    app.useLogger(logging.logger);
    // What Nest logged while the modules were built was held back until the JSON logger was in place.
    app.flushLogs();
    logging.install(fastify);
  }
  installRequestIdHeader(fastify);
  installOpenTelemetry(app, toOtelSettings(config.document));
  installCallContextHook(fastify);
  useBoundedJsonParser(app, config.server.bodyLimit, config.server.jsonValueLimit);
  useChatBodyLimit(app, config.server.chatBodyLimit);
  installApiPreAuth(app, config);
  if (metrics.enabled) {
    installHttpMetrics(fastify, app.get(MetricsService));
    const client = app.get(AiClient);
    app.get(MetricsService).observeDeployments(() => client.deploymentStatus());
  }
  app.useGlobalFilters(new ApiExceptionFilter(DIALECT_ERROR_SHAPES));
  if (config.server.basePath) app.setGlobalPrefix(config.server.basePath);
  installOpenApi(app, config.server.basePath);
  if (config.ledger.enabled) installUsagePage(app, config.server.basePath);
  return app;
}

/** The configured level and access-line switch, unless the caller chose them. */
function withLogDefaults(logs: Exclude<LogOutput, false>, config: TollgateConfig): Exclude<LogOutput, false> {
  return {
    ...logs,
    level: logs.level ?? defaultLogLevel(config),
    requests: logs.requests ?? config.document.logs?.requests ?? true,
  };
}

/**
 * Builds and starts the HTTP server from a loaded configuration (`npm start` and `tollgate serve`), after the
 * stores it can only check by connecting (checkServerStores: a ConfigError, reported without a stack trace).
 * `logs` as createHttpApp takes them (the demo writes its logs unbuffered).
 */
export async function startHttpServer(config: TollgateConfig, logs: LogOutput = {}): Promise<NestFastifyApplication> {
  await checkServerStores(config);
  const app = await createHttpApp(config, logs);
  installGracefulShutdown(app, { timeoutMs: config.server.shutdownTimeoutMs, graceMs: config.server.shutdownGraceMs });
  await app.listen(config.server.port, config.server.host);
  const logger = new Logger('Tollgate');
  const origin = await app.getUrl();
  logger.log(`listening on ${origin}${config.server.basePath}`);
  collectGarbageOnceIdle();
  // Not awaited: the probes' follow-up lines come when each settles, the server is already answering.
  logStartupSummary(logger, config, origin, app.get(AiClient)).catch((error: unknown) =>
    logger.warn(`start-up summary incomplete: ${(error as Error)?.message ?? String(error)}`),
  );
  return app;
}
