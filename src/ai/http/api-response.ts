import type { FastifyReply, FastifyRequest } from 'fastify';

/** `chatModel` -> `chat_model`: the REST wire format is snake_case throughout. */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    // Vectors are returned as they are: copying thousands of numbers per response buys nothing.
    return typeof value[0] === 'number' ? value : value.map(snakeCaseKeys);
  }
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (inner !== undefined) out[key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()] = snakeCaseKeys(inner);
  }
  return out;
}

/** A success body: snake_case keys plus the request id (DECISIONS.md B3). */
export function apiBody(request: FastifyRequest, body: Record<string, unknown>): Record<string, unknown> {
  return { ...(snakeCaseKeys(body) as Record<string, unknown>), request_id: String(request.id) };
}

/** Aborts upstream work when the caller disconnects before the answer was sent. */
export function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  const onClose = () => {
    if (!response.writableFinished) controller.abort(new Error('client disconnected'));
  };
  response.once('close', onClose);
  return controller.signal;
}
