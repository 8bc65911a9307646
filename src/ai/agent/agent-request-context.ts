import type { FastifyRequest } from 'fastify';
import { getAuthContext } from '../../auth/request-context';
import type { AgentContextHook } from './agent-module-options.interface';
import type { AgentRunContext } from './agent-tool.interface';

/**
 * The run context of one HTTP request: tenant and principal from AuthModule's context when its guard
 * authenticated the request, else from the host's hook; the request id always. A fresh object per
 * request, so concurrent runs never share one.
 */
export function agentContextFor(request: FastifyRequest, hook?: AgentContextHook): AgentRunContext {
  const requestId = String(request.id);
  const auth = getAuthContext(request);
  if (auth) {
    return {
      requestId,
      principal: String(auth.userId),
      ...(auth.tenantId !== undefined ? { tenantId: String(auth.tenantId) } : {}),
    };
  }
  const hosted = hook?.(request);
  return {
    requestId,
    ...(hosted?.principal !== undefined ? { principal: String(hosted.principal) } : {}),
    ...(hosted?.tenantId !== undefined ? { tenantId: String(hosted.tenantId) } : {}),
  };
}
