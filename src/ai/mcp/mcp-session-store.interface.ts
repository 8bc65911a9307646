/**
 * Session state of the Streamable HTTP transport, behind one interface so several server instances can
 * share it (memory for one process, Redis for many). A session is bound to the principal that opened it.
 */
export interface McpSession {
  id: string;
  /** Who opened it; every later request must come from the same principal. */
  principal: string;
  tenantId?: string;
  /** Negotiated at initialize; later requests must send it in MCP-Protocol-Version. */
  protocolVersion: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface McpSessionStore {
  create(session: McpSession, ttlMs: number): Promise<void>;
  /** The session, with its idle timer restarted; undefined when unknown or expired. */
  touch(id: string, ttlMs: number): Promise<McpSession | undefined>;
  /** True when the session existed. */
  delete(id: string): Promise<boolean>;
  close(): Promise<void>;
}

export const MCP_SESSION_STORE = Symbol('tollgate:mcp-session-store');
