import { ConsoleLogger, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from '../app.module';
import { ApiExceptionFilter } from '../ai/http/api-exception.filter';
import { installRequestIdHeader, requestIdAdapterOptions } from '../ai/http/request-id';
import type { TollgateConfig } from '../config/config.types';
import { installGracefulShutdown } from './graceful-shutdown';

/**
 * Builds the HTTP application without listening (tests inject requests into it): request ids on every
 * response, the JSON error envelope for every error (404, 405, 413 included), routes under `base_path`.
 */
export async function createHttpApp(config: TollgateConfig, logger: ConsoleLogger | false = new ConsoleLogger()): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    new FastifyAdapter({ bodyLimit: config.server.bodyLimit, ...requestIdAdapterOptions }),
    // An explicit logger: the CLI context that runs `tollgate serve` silenced the default one.
    { logger },
  );
  installRequestIdHeader(app.getHttpAdapter().getInstance());
  app.useGlobalFilters(new ApiExceptionFilter());
  if (config.server.basePath) app.setGlobalPrefix(config.server.basePath);
  return app;
}

/** Builds and starts the HTTP server from a loaded configuration (`npm start` and `tollgate serve`). */
export async function startHttpServer(config: TollgateConfig): Promise<NestFastifyApplication> {
  const app = await createHttpApp(config);
  installGracefulShutdown(app, { timeoutMs: config.server.shutdownTimeoutMs });
  await app.listen(config.server.port, config.server.host);
  const logger = new Logger('Tollgate');
  logger.log(`configuration: ${config.file ?? 'built-in defaults'}; auth ${config.auth ? 'on' : 'off'}`);
  logger.log(`listening on ${await app.getUrl()}${config.server.basePath}`);
  return app;
}
