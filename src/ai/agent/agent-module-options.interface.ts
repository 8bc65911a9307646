import type { FastifyRequest } from 'fastify';
import type { AgentLimits } from './agent-limits';
import type { AgentToolProtocol } from './agent.service';
import type { AgentTelemetryHook } from './agent-telemetry';
import type { AgentAuthorizer, AgentRunContext, AgentTool } from './agent-tool.interface';

/** Who is asking, as the host sees an HTTP request when AuthModule does not protect the route. */
export type AgentContextHook = (request: FastifyRequest) => Pick<AgentRunContext, 'tenantId' | 'principal'> | undefined;

/** The `agent` part of AiModuleOptions; every search tool is an agent tool too. */
export interface AgentModuleOptions {
  /** Unset values take docs/decisions.md B3 defaults. */
  limits?: Partial<AgentLimits>;
  /** `auto` (default): native tool calling where the provider translates tools; `prompt`: always the prompt protocol. */
  toolProtocol?: AgentToolProtocol;
  /** JSONL audit file, one line per agent event; unset: no audit log. */
  auditLog?: string;
  /** Generic tools (name, description, JSON Schema of the arguments, call). */
  tools?: AgentTool[];
  /** At most 16 hooks; each receives every agent event of every run. */
  telemetry?: AgentTelemetryHook[];
  /** Veto of any tool call. */
  authorize?: AgentAuthorizer;
  /** Tenant and principal of a request when AuthModule's context is absent. */
  contextHook?: AgentContextHook;
}
