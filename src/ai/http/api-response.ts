import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Converted keys, remembered because every response repeats the same few field names; bounded, since
 * record keys from documents or tool results can be anything.
 */
const snakeKeys = new Map<string, string>();
const MAX_REMEMBERED_KEYS = 1024;

function snakeKey(key: string): string {
  let snake = snakeKeys.get(key);
  if (snake === undefined) {
    snake = key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
    if (snakeKeys.size < MAX_REMEMBERED_KEYS) snakeKeys.set(key, snake);
  }
  return snake;
}

/** `chatModel` -> `chat_model`: the REST wire format is snake_case throughout. */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    // Vectors are returned as they are: copying thousands of numbers per response buys nothing.
    return typeof value[0] === 'number' ? value : value.map(snakeCaseKeys);
  }
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const inner = (value as Record<string, unknown>)[key];
    if (inner !== undefined) out[snakeKey(key)] = snakeCaseKeys(inner);
  }
  return out;
}

/** A success body: snake_case keys plus the request id (docs/decisions.md B3). */
export function apiBody(request: FastifyRequest, body: Record<string, unknown>): Record<string, unknown> {
  const out = snakeCaseKeys(body) as Record<string, unknown>;
  out.request_id = String(request.id);
  return out;
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
