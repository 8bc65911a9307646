import type { FastifyRequest } from 'fastify';
import type { ApiErrorResponse } from './api-error';

/**
 * A surface whose errors take another shape than the /v1 envelope (a client dialect, MCP's JSON-RPC): which
 * requests are its, and its wording of the /v1 API's answer. The exception filter is given these by whoever
 * mounts the surfaces (the server, or a host app), so the HTTP edge names no surface above it.
 */
export interface ErrorShape {
  handles(request: FastifyRequest): boolean;
  answer(error: ApiErrorResponse): { status: number; headers: Record<string, string>; body: unknown };
}
