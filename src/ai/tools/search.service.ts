/**
 * Search through the registered tools, and search with generation: `search` never talks to an AI provider;
 * `searchAndGenerate` turns the results into context items and asks the AiClient (with its retries and
 * fallback). With no results the prompt is sent without context, through the without_context template.
 */
import type { AiClient, GenerateOptions, GenerateResponse, GenerateStreamEvent } from '../client/ai-client';
import { InvalidRequestError, UnknownProviderError } from '../errors';
import type { ContextItem } from '../prompts/context-rendering';
import { SEARCH_DEFAULTS, type SearchResponse, type SearchResult, type SearchToolSettings } from './search-tool.interface';
import { ToolNotConfiguredError } from './tool-errors';
import { ToolRegistry } from './tool-registry';

/** The `search` part of AiModuleOptions. */
export interface SearchModuleOptions {
  tools: SearchToolSettings[];
  /** Tool used when a call names none: this, else `web_search` when registered, else the first tool. */
  defaultTool?: string;
  /** Results when a call gives no limit (default 5). */
  defaultLimit?: number;
  /** Largest limit a call may ask for (default 20). */
  maxLimit?: number;
  /** Longest accepted query in characters (default 2000). */
  maxQueryChars?: number;
}

export interface SearchOptions {
  /** Registered tool or group; the default tool when omitted. */
  tool?: string;
  limit?: number;
  /** `false`: a group asks its first member only, and generation does not fall back to other providers. */
  enableFallback?: boolean;
  signal?: AbortSignal;
}

export interface SearchAndGenerateOptions extends SearchOptions, Omit<GenerateOptions, 'signal' | 'enableFallback'> {}

export type SearchAndGenerateResponse = SearchResponse & { generation: GenerateResponse };

/** The fallback tool name SEARXNG_URL registers (docs/configuration.md). */
export const WEB_SEARCH_TOOL = 'web_search';

export class SearchService {
  private readonly limits: { defaultLimit: number; maxLimit: number; maxQueryChars: number };
  private readonly defaultTool?: string;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly client: AiClient,
    options: Omit<SearchModuleOptions, 'tools'> = {},
  ) {
    this.limits = {
      defaultLimit: options.defaultLimit ?? SEARCH_DEFAULTS.limit,
      maxLimit: options.maxLimit ?? SEARCH_DEFAULTS.maxLimit,
      maxQueryChars: options.maxQueryChars ?? SEARCH_DEFAULTS.maxQueryChars,
    };
    const names = registry.names();
    if (options.defaultTool !== undefined) registry.get(options.defaultTool);
    this.defaultTool = options.defaultTool ?? (names.includes(WEB_SEARCH_TOOL) ? WEB_SEARCH_TOOL : names[0]);
  }

  static fromOptions(options: SearchModuleOptions, client: AiClient): SearchService {
    return new SearchService(ToolRegistry.fromSettings(options.tools), client, options);
  }

  toolNames(): string[] {
    return this.registry.names();
  }

  describeTools(): Array<Record<string, unknown>> {
    return this.registry.list().map((tool) => ({ ...tool.describe(), default: tool.name === this.defaultTool }));
  }

  /** Normalized results from one tool (or group); no AI provider is involved. */
  async search(query: string, options: SearchOptions = {}): Promise<SearchResponse> {
    const checkedQuery = this.checkQuery(query);
    const limit = this.checkLimit(options.limit);
    const tool = this.registry.get(this.toolName(options.tool));
    return tool.search(checkedQuery, { limit, signal: options.signal, enableFallback: options.enableFallback });
  }

  /** Searches, then generates an answer to `query` with the results as context items. */
  async searchAndGenerate(query: string, options: SearchAndGenerateOptions = {}): Promise<SearchAndGenerateResponse> {
    const { tool, limit, enableFallback, signal, ...generate } = options;
    this.checkProvider(generate.provider);
    const found = await this.search(query, { tool, limit, enableFallback, signal });
    const generation = await this.client.generateResponse(found.query, toContextItems(found.results), { ...generate, enableFallback, signal });
    return { ...found, generation };
  }

  /** The search is done when this resolves; the generation starts when `events` is iterated. */
  async searchAndStream(
    query: string,
    options: SearchAndGenerateOptions = {},
  ): Promise<{ found: SearchResponse; events: AsyncIterable<GenerateStreamEvent> }> {
    const { tool, limit, enableFallback, signal, ...generate } = options;
    this.checkProvider(generate.provider);
    const found = await this.search(query, { tool, limit, enableFallback, signal });
    return { found, events: this.client.streamResponse(found.query, toContextItems(found.results), { ...generate, enableFallback, signal }) };
  }

  close(): Promise<void> {
    return this.registry.close();
  }

  /** A provider that cannot answer is refused before the search tool is paid for. */
  private checkProvider(provider: string | undefined): void {
    const providers = this.client.providerNames();
    if (provider !== undefined && !providers.includes(provider)) {
      throw new UnknownProviderError(`unknown provider '${provider}' (registered: ${providers.join(', ') || 'none'})`);
    }
  }

  private toolName(requested: string | undefined): string {
    if (requested !== undefined) return requested;
    if (this.defaultTool === undefined) {
      throw new ToolNotConfiguredError('no search tool is configured (set SEARXNG_URL, or add a tools: section to the configuration)');
    }
    return this.defaultTool;
  }

  private checkQuery(query: unknown): string {
    if (typeof query !== 'string' || query.trim() === '') throw new InvalidRequestError('query must be a non-empty string');
    const trimmed = query.trim();
    if ([...trimmed].length > this.limits.maxQueryChars) {
      throw new InvalidRequestError(`query must be at most ${this.limits.maxQueryChars} characters`);
    }
    return trimmed;
  }

  private checkLimit(limit: unknown): number {
    if (limit === undefined) return this.limits.defaultLimit;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > this.limits.maxLimit) {
      throw new InvalidRequestError(`limit must be an integer from 1 to ${this.limits.maxLimit}`);
    }
    return limit;
  }
}

/** Each result becomes one context item, rendered as `title:`, `url:`, `snippet:`, `source:` lines. */
export function toContextItems(results: readonly SearchResult[]): ContextItem[] {
  return results.map((result) => ({ title: result.title, url: result.url, snippet: result.snippet, source: result.source }));
}
