import { ConsoleLogger, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from '../app.module';
import type { TollgateConfig } from '../config/config.types';

/** Builds and starts the HTTP server from a loaded configuration (`npm start` and `tollgate serve`). */
export async function startHttpServer(config: TollgateConfig): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    new FastifyAdapter({ bodyLimit: config.server.bodyLimit }),
    // An explicit logger: the CLI context that runs `tollgate serve` silenced the default one.
    { logger: new ConsoleLogger() },
  );
  // SIGTERM / SIGINT close the HTTP server and every module (store connections) before exit.
  app.enableShutdownHooks();
  if (config.server.basePath) app.setGlobalPrefix(config.server.basePath);
  await app.listen(config.server.port, config.server.host);

  const logger = new Logger('Tollgate');
  logger.log(`configuration: ${config.file ?? 'built-in defaults'}; auth ${config.auth ? 'on' : 'off'}`);
  logger.log(`listening on ${await app.getUrl()}${config.server.basePath}`);
  return app;
}
