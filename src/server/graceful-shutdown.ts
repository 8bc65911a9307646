import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ReadinessService } from './readiness.service';

export interface GracefulShutdownOptions {
  /** How long after the signal requests in flight (streams included) may run before their connections are cut. */
  timeoutMs: number;
  /** How long after SIGTERM the server stays not ready but keeps serving, so load balancers take it out first. */
  graceMs?: number;
  /** How long the modules' shutdown hooks (store connections, provider pools, MCP sessions) may take after the deadline. */
  hooksTimeoutMs?: number;
  signals?: readonly NodeJS.Signals[];
  exit?: (code: number) => void;
}

const DEFAULT_HOOKS_TIMEOUT_MS = 10_000;
/** How often the drain closes connections that went idle since (Node's close() closes those idle at that moment only). */
const IDLE_SWEEP_MS = 50;

/**
 * SIGTERM / SIGINT, in order:
 * 1. /readyz answers 503 at once, and every answer not yet begun carries `Connection: close`, so each
 *    client's next request opens a new connection, which a load balancer sends to a ready process;
 * 2. SIGTERM only: for `graceMs` the server keeps listening and serving as before, long enough for a load
 *    balancer's health check or an orchestrator to take it out of rotation (SIGINT, a person at a terminal,
 *    skips it);
 * 3. the listener closes, idle keep-alive connections are closed at once and each connection as soon as it
 *    goes idle, and requests in flight (or arriving on a connection still open) are answered, until the
 *    deadline, `timeoutMs` after the signal, cuts what is left;
 * 4. only then the modules close (stores, provider pools, MCP sessions), so a request in flight never loses
 *    its store.
 * Exit 0 after a clean drain, 1 when connections were cut or a hook failed or hung. Nest's own shutdown hooks
 * are not used: they close modules before the HTTP server and re-raise the signal.
 */
export function installGracefulShutdown(app: NestFastifyApplication, options: GracefulShutdownOptions): void {
  const logger = new Logger('Shutdown');
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const hooksTimeoutMs = options.hooksTimeoutMs ?? DEFAULT_HOOKS_TIMEOUT_MS;
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let leaving = false;

  const server = app.getHttpServer() as Server;
  // Each open connection and its latest response: at the signal, answers not yet begun are told to close theirs.
  const connections = new Set<Socket>();
  const latestResponse = new WeakMap<Socket, ServerResponse>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', (_request, reply, done) => {
    // On the raw response, so streams that write their own head (sse-writer.ts) carry it too.
    if (leaving) reply.raw.setHeader('connection', 'close');
    else if (reply.raw.socket) latestResponse.set(reply.raw.socket, reply.raw);
    done();
  });

  const shutdown = async (signal: NodeJS.Signals) => {
    if (leaving) return;
    leaving = true;
    const signalled = Date.now();
    app.get(ReadinessService, { strict: false }).markDraining();
    for (const socket of connections) {
      const response = latestResponse.get(socket);
      if (response && !response.headersSent) response.setHeader('connection', 'close');
    }
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

    const graceMs = signal === 'SIGTERM' ? (options.graceMs ?? 0) : 0;
    if (graceMs > 0) {
      logger.log(`${signal}: not ready; serving for the ${graceMs / 1000} s grace, then draining`);
      await delay(graceMs);
    }
    const drainStarted = Date.now();
    logger.log(`${signal}: no new connections; draining in-flight requests (deadline ${options.timeoutMs / 1000} s)`);
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    let failed = false;
    try {
      await fastify.close();
      clearInterval(sweep);
      clearTimeout(deadline);
      logger.log(`drained in ${Date.now() - drainStarted} ms, ${Date.now() - signalled} ms after ${signal}; closing the modules`);
      // Nest hands the signal to onApplicationShutdown hooks; its typings omit the parameter.
      await (app as unknown as { close(signal: string): Promise<void> }).close(signal);
    } catch (error) {
      failed = true;
      logger.error(`shutdown failed: ${(error as Error)?.name ?? 'error'}`);
    }
    clearInterval(sweep);
    clearTimeout(deadline);
    clearTimeout(hardStop);
    exit(cut || failed ? 1 : 0);
  };

  for (const signal of signals) process.once(signal, (received: NodeJS.Signals) => void shutdown(received));
}
