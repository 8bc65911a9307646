import { UNMATCHED_ROUTE, type MetricsService } from './metrics.service';

/**
 * The part of a Fastify instance the hook needs; structural, because @nestjs/platform-fastify may bring
 * its own copy of Fastify whose types are not the application's.
 */
export interface ResponseHookHost {
  addHook(
    name: 'onResponse',
    hook: (
      request: { method: string; routeOptions: { url?: string } },
      reply: { statusCode: number; elapsedTime: number },
      done: () => void,
    ) => void,
  ): unknown;
}

/** Counts every response (404s and errors raised before routing included) under its route pattern. */
export function installHttpMetrics(fastify: ResponseHookHost, metrics: MetricsService): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics.observeHttpRequest(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
