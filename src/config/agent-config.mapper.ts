/**
 * `agent:` and `mcp:` sections -> agent limits and MCP settings. Rules the schema cannot express
 * (redis needs a URL, jwt needs the AuthModule) are checked here, with the key in the message.
 */
import { isAbsolute, resolve, dirname } from 'node:path';
import { resolveAgentLimits, type AgentLimits } from '../ai/agent/agent-limits';
import type { AgentToolProtocol } from '../ai/agent/agent.service';
import { DEFAULT_MCP_SETTINGS, type McpSettings } from '../ai/mcp/mcp-settings';
import { ConfigError } from './config.error';
import type { ConfigDocument, ConfigSource } from './config.types';

export function toAgentSettings(
  document: ConfigDocument,
  context: ConfigSource,
): { limits: AgentLimits; toolProtocol?: AgentToolProtocol; auditLog?: string } {
  const agent = document.agent ?? {};
  let limits: AgentLimits;
  try {
    limits = resolveAgentLimits({
      maxLoops: agent.max_loops,
      maxTaskBytes: agent.max_task_bytes,
      maxResponseBytes: agent.max_response_bytes,
      maxContextBytes: agent.max_context_bytes,
      maxActionBytes: agent.max_action_bytes,
      maxObservationBytes: agent.max_observation_bytes,
    });
  } catch (error) {
    // Ranges are the schema's job; what is left here is the rule between the sizes.
    throw new ConfigError([`${context.source}: agent.max_context_bytes: ${(error as Error).message}`]);
  }
  const settings = { limits, ...(agent.tool_protocol !== undefined ? { toolProtocol: agent.tool_protocol } : {}) };
  if (agent.audit_log === undefined) return settings;
  const base = context.filePath ? dirname(context.filePath) : context.cwd;
  return { ...settings, auditLog: isAbsolute(agent.audit_log) ? agent.audit_log : resolve(base, agent.audit_log) };
}

export function toMcpSettings(document: ConfigDocument, source: string): McpSettings {
  const mcp = document.mcp ?? {};
  const problems: string[] = [];
  const auth = mcp.auth ?? DEFAULT_MCP_SETTINGS.auth;
  if (auth === 'jwt' && !document.auth) problems.push('mcp.auth: jwt needs the AuthModule configured (an auth: section or JWT_SECRET)');
  const storeKind = mcp.session_store ?? 'memory';
  if (storeKind === 'redis' && mcp.redis_url === undefined) problems.push('mcp.redis_url: is required for session_store redis');
  if (storeKind === 'memory' && mcp.redis_url !== undefined) problems.push('mcp.redis_url: applies to session_store redis only');
  if (problems.length) throw new ConfigError(problems.map((problem) => `${source}: ${problem}`));
  const token = mcp.token ?? document.api?.token;
  return {
    enabled: mcp.enabled ?? DEFAULT_MCP_SETTINGS.enabled,
    path: (mcp.path ?? DEFAULT_MCP_SETTINGS.path).replace(/(.)\/+$/, '$1'),
    auth,
    ...(token !== undefined ? { token } : {}),
    allowedOrigins: (mcp.allowed_origins ?? []).map((origin) => origin.toLowerCase()),
    maxBodyBytes: mcp.max_body_bytes ?? DEFAULT_MCP_SETTINGS.maxBodyBytes,
    sessionTtlMs: Math.round((mcp.session_ttl ?? DEFAULT_MCP_SETTINGS.sessionTtlMs / 1000) * 1000),
    sessionStore:
      storeKind === 'redis'
        ? { kind: 'redis', url: mcp.redis_url!, keyPrefix: mcp.redis_key_prefix ?? 'tollgate:mcp:' }
        : { kind: 'memory' },
  };
}
