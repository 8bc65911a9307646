import { ConnectionError, RateLimitError } from '../errors';
import type { SearchCallOptions, SearchResponse, SearchTool } from './search-tool.interface';

/** Only transient transport trouble moves a group on (docs/search-agent-mcp.md); a bad answer or key does not. */
export function isToolFallbackEligible(error: unknown): boolean {
  return error instanceof ConnectionError || error instanceof RateLimitError;
}

/**
 * A capability group: one tool name over ordered members. The first member answers unless it fails with a
 * connection or rate-limit error; then the next one is asked, and so on. When every member failed, the
 * first member's error is reported. The response keeps the group's name and says which adapter answered.
 */
export class ToolGroup implements SearchTool {
  readonly kind = 'group' as const;

  constructor(
    readonly name: string,
    private readonly members: readonly SearchTool[],
  ) {}

  async search(query: string, options: SearchCallOptions): Promise<SearchResponse> {
    let first: unknown;
    for (const [index, member] of this.members.entries()) {
      if (index > 0 && (options.enableFallback === false || options.signal?.aborted)) break;
      try {
        const response = await member.search(query, options);
        return { ...response, tool: this.name };
      } catch (error) {
        if (index > 0) continue;
        // Like provider fallback (docs/decisions.md B2): a later member's own failure of any kind just moves on.
        if (!isToolFallbackEligible(error)) throw error;
        first = error;
      }
    }
    throw first;
  }

  describe(): Record<string, unknown> {
    return { name: this.name, kind: this.kind, tools: this.members.map((member) => member.name) };
  }

  /** Members are closed by the registry that owns them. */
  async close(): Promise<void> {}
}
