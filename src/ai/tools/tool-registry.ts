/**
 * The registered search tools by name, in registration order. Adapters are built first so groups can refer
 * to them; a group names adapters only (no group of groups), which keeps fallback order obvious.
 */
import { TollgateError } from '../errors';
import { SearchApiTool } from './searchapi.tool';
import { SearxngTool } from './searxng.tool';
import type { SearchTool, SearchToolSettings } from './search-tool.interface';
import { ToolNotConfiguredError } from './tool-errors';
import { ToolGroup } from './tool-group';

export class ToolRegistry {
  private readonly tools = new Map<string, SearchTool>();

  constructor(tools: Iterable<SearchTool> = []) {
    for (const tool of tools) this.add(tool);
  }

  static fromSettings(settings: readonly SearchToolSettings[]): ToolRegistry {
    const registry = new ToolRegistry();
    try {
      for (const entry of settings) {
        if (entry.kind === 'searxng') registry.add(new SearxngTool(entry));
        else if (entry.kind === 'searchapi') registry.add(new SearchApiTool(entry));
      }
      for (const entry of settings) {
        if (entry.kind !== 'group') continue;
        const members = entry.tools.map((name, index) => {
          const member = registry.tools.get(name);
          if (!member || member.kind === 'group') {
            throw new TollgateError(`tools.${entry.name}.tools[${index}]: '${name}' is not a registered searxng or searchapi tool`);
          }
          return member;
        });
        registry.add(new ToolGroup(entry.name, members));
      }
    } catch (error) {
      void registry.close();
      throw error;
    }
    return registry;
  }

  add(tool: SearchTool): void {
    if (this.tools.has(tool.name)) throw new TollgateError(`tool '${tool.name}' is registered twice; tool names must be unique`);
    this.tools.set(tool.name, tool);
  }

  get(name: string): SearchTool {
    const tool = this.tools.get(name);
    if (!tool) {
      throw new ToolNotConfiguredError(`tool '${name}' is not configured (configured: ${this.names().join(', ') || 'none'})`);
    }
    return tool;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  list(): SearchTool[] {
    return [...this.tools.values()];
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.list().map((tool) => tool.close()));
  }
}
