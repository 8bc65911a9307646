/** What the host tells the agent about who is asking (docs/search-agent-mcp.md); one object per run, never shared. */
export interface AgentRunContext {
  requestId: string;
  tenantId?: string;
  principal?: string;
}

export interface AgentToolCall {
  args: Record<string, unknown>;
  context: Readonly<AgentRunContext>;
  signal?: AbortSignal;
}

/**
 * A tool the agent may call: a name, a description and a JSON Schema for its arguments (checked with ajv
 * before `call` runs). The result is serialized to JSON for the model and cut to the observation limit.
 */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  call(call: AgentToolCall): Promise<unknown>;
}

/** Veto of one tool call; false (or a throw) refuses it and the model sees the `forbidden` category. */
export type AgentAuthorizer = (request: { tool: string; args: Readonly<Record<string, unknown>>; context: Readonly<AgentRunContext> }) => boolean | Promise<boolean>;
