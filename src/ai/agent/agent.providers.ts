import type { Provider } from '@nestjs/common';
import { TollgateError } from '../errors';
import { AI_MODULE_OPTIONS } from '../ai.constants';
import type { AiModuleOptions } from '../ai-module-options.interface';
import { AiClient } from '../client/ai-client';
import { SearchService } from '../tools/search.service';
import { SEARCH_DEFAULTS } from '../tools/search-tool.interface';
import { resolveAgentLimits } from './agent-limits';
import { MAX_TELEMETRY_HOOKS } from './agent-telemetry';
import { AgentToolset, searchAgentTools } from './agent-toolset';
import { AgentService } from './agent.service';
import { JsonlAuditSink } from './jsonl-audit-sink';

/** Injection token of the audit sink; null when no audit_log is configured. */
export const AGENT_AUDIT_SINK = Symbol('tollgate:agent-audit-sink');

export function createAuditSink(options: AiModuleOptions): JsonlAuditSink | null {
  return options.agent?.auditLog ? new JsonlAuditSink(options.agent.auditLog) : null;
}

/** The agent over the client, with every search tool and the host's generic tools. */
export function createAgentService(options: AiModuleOptions, client: AiClient, search: SearchService, sink: JsonlAuditSink | null): AgentService {
  const agent = options.agent ?? {};
  const telemetry = [...(agent.telemetry ?? []), ...(sink ? [sink.hook] : [])];
  if (telemetry.length > MAX_TELEMETRY_HOOKS) {
    throw new TollgateError(`agent.telemetry: at most ${MAX_TELEMETRY_HOOKS} hooks (got ${telemetry.length})`);
  }
  const toolset = new AgentToolset([...searchAgentTools(search, options.search?.maxLimit ?? SEARCH_DEFAULTS.maxLimit), ...(agent.tools ?? [])]);
  return new AgentService(client, toolset, { limits: resolveAgentLimits(agent.limits), toolProtocol: agent.toolProtocol, telemetry, authorize: agent.authorize });
}

export const AGENT_PROVIDERS: Provider[] = [
  { provide: AGENT_AUDIT_SINK, useFactory: createAuditSink, inject: [AI_MODULE_OPTIONS] },
  { provide: AgentService, useFactory: createAgentService, inject: [AI_MODULE_OPTIONS, AiClient, SearchService, AGENT_AUDIT_SINK] },
];
