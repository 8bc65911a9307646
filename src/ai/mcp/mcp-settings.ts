/** Settings of the MCP server; times in milliseconds. */
export interface McpSettings {
  /** Serve Streamable HTTP on the server (stdio is always available through `tollgate mcp --stdio`). */
  enabled: boolean;
  /** Route of the Streamable HTTP endpoint, relative to the server's base path. */
  path: string;
  /** token: bearer token (constant time); jwt: a JWT checked with AuthModule's verifier; none: no check. */
  auth: 'token' | 'jwt' | 'none';
  token?: string;
  /** Browser origins allowed to call; any other Origin header -> 403. */
  allowedOrigins: string[];
  maxBodyBytes: number;
  sessionTtlMs: number;
  sessionStore: { kind: 'memory' } | { kind: 'redis'; url: string; keyPrefix: string };
}

export const DEFAULT_MCP_SETTINGS: Readonly<McpSettings> = Object.freeze<McpSettings>({
  enabled: false,
  path: '/mcp',
  auth: 'token',
  allowedOrigins: [],
  maxBodyBytes: 1024 * 1024,
  sessionTtlMs: 3_600_000,
  sessionStore: { kind: 'memory' },
});
