import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when it is safe to echo (docs/decisions.md B3), else a fresh UUID. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && VALID_REQUEST_ID.test(header) ? header : flatUuid();
}

/**
 * A fresh UUID as one flat string. randomUUID builds its text by concatenation, a tree of some twenty string
 * pieces that everything keeping the id holds on to: a full memory ledger held two million of them, and
 * collecting them tripled the process's garbage collection time under load (bench/RESULTS.md, 2026-11-27).
 * toLowerCase of the already lower-case text returns it flattened.
 */
function flatUuid(): string {
  return randomUUID().toLowerCase();
}

/** FastifyAdapter options: Fastify assigns `request.id` through this, so logs and replies share it. */
export const requestIdAdapterOptions = {
  requestIdHeader: false as const,
  genReqId: (request: { headers: IncomingHttpHeaders }) => requestIdFor(request.headers['x-request-id']),
};

/**
 * The part of a Fastify instance the hook needs; structural, because @nestjs/platform-fastify may bring
 * its own copy of Fastify whose types are not the application's.
 */
export interface RequestHookHost {
  addHook(
    name: 'onRequest',
    hook: (request: { id: string }, reply: { header(name: string, value: string): unknown }, done: () => void) => void,
  ): unknown;
}

/** Every response, including 404s and errors raised before routing, carries x-request-id. */
export function installRequestIdHeader(fastify: RequestHookHost): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
}
