/**
 * The tools an agent may be allowed to use, by name: search tools from SearchService and generic tools
 * supplied by the host. Each tool's argument schema is compiled once with ajv; a call whose arguments do
 * not validate never reaches the tool.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { TollgateError } from '../errors';
import { ToolNotConfiguredError } from '../tools/tool-errors';
import type { SearchService } from '../tools/search.service';
import type { AgentTool, AgentToolCall } from './agent-tool.interface';
import { ToolArgumentsError } from './tool-failure-category';

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface Entry {
  tool: AgentTool;
  validate: ValidateFunction;
}

export class AgentToolset {
  private readonly entries = new Map<string, Entry>();
  private readonly ajv = new Ajv({ allErrors: false, strict: false });

  constructor(tools: Iterable<AgentTool> = []) {
    for (const tool of tools) this.add(tool);
  }

  add(tool: AgentTool): void {
    if (!TOOL_NAME.test(tool.name)) throw new TollgateError(`agent tool name '${tool.name}' must be 1-64 letters, digits, "_" or "-"`);
    if (this.entries.has(tool.name)) throw new TollgateError(`agent tool '${tool.name}' is registered twice; tool names must be unique`);
    let validate: ValidateFunction;
    try {
      validate = this.ajv.compile(tool.parameters);
    } catch (error) {
      throw new TollgateError(`agent tool '${tool.name}': parameters is not a valid JSON Schema (${(error as Error).message})`);
    }
    this.entries.set(tool.name, { tool, validate });
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  describe(names: readonly string[]): Array<{ name: string; description: string; parameters: Record<string, unknown> }> {
    return names.map((name) => {
      const { tool } = this.entry(name);
      return { name: tool.name, description: tool.description, parameters: tool.parameters };
    });
  }

  /** Throws ToolNotConfiguredError naming the first unknown tool. */
  checkAllowlist(names: readonly string[]): void {
    for (const name of names) this.entry(name);
  }

  /** Validates the arguments (ToolArgumentsError names the failing path, never its value), then calls. */
  async call(name: string, call: AgentToolCall): Promise<unknown> {
    const { tool, validate } = this.entry(name);
    if (!validate(call.args)) {
      const first = validate.errors?.[0];
      const where = first?.instancePath ? `args${first.instancePath.replace(/\//g, '.')}` : 'args';
      throw new ToolArgumentsError(`${where} ${first?.message ?? 'is invalid'}`);
    }
    return tool.call(call);
  }

  private entry(name: string): Entry {
    const found = this.entries.get(name);
    if (!found) {
      throw new ToolNotConfiguredError(`tool '${name}' is not configured for the agent (configured: ${this.names().join(', ') || 'none'})`);
    }
    return found;
  }
}

/** Each configured search tool (or group) as an agent tool taking `{query, limit?}`. */
export function searchAgentTools(search: SearchService, maxLimit = 20): AgentTool[] {
  return search.toolNames().map((name) => ({
    name,
    description: `Web search through '${name}'. Returns normalized results (title, url, snippet, source).`,
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 2000 },
        limit: { type: 'integer', minimum: 1, maximum: maxLimit },
      },
      required: ['query'],
      additionalProperties: false,
    },
    call: async ({ args, signal }) => {
      const found = await search.search(args.query as string, { tool: name, limit: args.limit as number | undefined, signal });
      return found.results;
    },
  }));
}
