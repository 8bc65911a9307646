import type { Server } from 'node:http';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { errorEnvelope } from '../http/api-error';

export interface GracefulShutdownOptions {
  /** How long in-flight requests (streams included) may run after the signal before their connections are cut. */
  timeoutMs: number;
  /** How long the modules' shutdown hooks (store connections, provider pools, MCP sessions) may take after that. */
  hooksTimeoutMs?: number;
  signals?: readonly NodeJS.Signals[];
  exit?: (code: number) => void;
}

const DEFAULT_HOOKS_TIMEOUT_MS = 10_000;

/**
 * SIGTERM / SIGINT: stop accepting connections at once (idle kept-alive connections are closed, and a request
 * arriving on a busy one is answered 503 `shutting_down` with `Connection: close`), let in-flight requests
 * finish until the deadline, then cut
 * what is left; only then close the modules (stores, provider pools, MCP sessions), so a request in flight
 * never loses its store. Exit 0 after a clean drain, 1 when connections were cut or a hook failed or hung.
 * Nest's own shutdown hooks are not used: they close modules before the HTTP server and re-raise the signal.
 */
export function installGracefulShutdown(app: NestFastifyApplication, options: GracefulShutdownOptions): void {
  const logger = new Logger('Shutdown');
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const hooksTimeoutMs = options.hooksTimeoutMs ?? DEFAULT_HOOKS_TIMEOUT_MS;
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let started = false;

  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!started) {
      done();
      return;
    }
    const refusal = { status: 503, type: 'shutting_down', message: 'The server is shutting down; retry the request.', headers: {}, unexpected: false };
    void reply.code(503).header('connection', 'close').send(errorEnvelope(refusal, request.id));
  });

  const shutdown = async (signal: NodeJS.Signals) => {
    if (started) return;
    started = true;
    const server = app.getHttpServer() as Server;
    logger.log(`${signal}: no new connections; draining in-flight requests (deadline ${options.timeoutMs / 1000} s)`);
    let cut = false;
    const deadline = setTimeout(() => {
      cut = true;
      logger.warn(`drain deadline of ${options.timeoutMs / 1000} s passed: closing the remaining connections`);
      server.closeAllConnections();
    }, options.timeoutMs);
    // A hook that never settles must not keep the process alive.
    const hardStop = setTimeout(() => {
      logger.error(`shutdown hooks did not finish within ${hooksTimeoutMs / 1000} s after the drain deadline; exiting`);
      exit(1);
    }, options.timeoutMs + hooksTimeoutMs);
    hardStop.unref();
    let failed = false;
    try {
      await fastify.close();
      clearTimeout(deadline);
      // Nest hands the signal to onApplicationShutdown hooks; its typings omit the parameter.
      await (app as unknown as { close(signal: string): Promise<void> }).close(signal);
    } catch (error) {
      failed = true;
      logger.error(`shutdown failed: ${(error as Error)?.name ?? 'error'}`);
    }
    clearTimeout(deadline);
    clearTimeout(hardStop);
    exit(cut || failed ? 1 : 0);
  };

  for (const signal of signals) process.once(signal, (received: NodeJS.Signals) => void shutdown(received));
}
