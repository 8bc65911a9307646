import type { FastifyRequest } from 'fastify';
import type { ApiErrorResponse } from '../../http/api-error';
import type { ErrorShape } from '../../http/error-shapes';

/** JSON-RPC's code for a body that is not JSON; every other refusal is a server-defined error. */
const PARSE_ERROR = -32700;
const SERVER_ERROR = -32000;

/**
 * Route config of the MCP endpoint's methods: errors raised before its handler runs (the body parser's,
 * a guard's) are answered as JSON-RPC errors too, like the endpoint's own refusals.
 */
export const MCP_ROUTE_CONFIG = Object.freeze({ jsonRpcErrors: true });

export function isMcpRoute(request: FastifyRequest): boolean {
  return (request.routeOptions?.config as { jsonRpcErrors?: unknown } | undefined)?.jsonRpcErrors === true;
}

/** A refusal as a JSON-RPC error; the request's id is not known, so it is null. */
export function jsonRpcErrorBody(message: string, code = SERVER_ERROR) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

/** The exception filter's answer to an error on the MCP endpoint, in JSON-RPC's shape. */
export function jsonRpcErrorFor(error: ApiErrorResponse) {
  return jsonRpcErrorBody(error.message, error.type === 'invalid_json' ? PARSE_ERROR : SERVER_ERROR);
}

/** The exception filter's answer on the MCP endpoint: the status and headers of /v1, a JSON-RPC body. */
export const MCP_ERROR_SHAPE: ErrorShape = {
  handles: isMcpRoute,
  answer: (error) => ({ status: error.status, headers: error.headers, body: jsonRpcErrorFor(error) }),
};
