/** The one interface every search tool implements (docs/search-agent-mcp.md): adapters and capability groups alike. */

export const SEARCH_ADAPTER_KINDS = ['searxng', 'searchapi'] as const;
export type SearchAdapterKind = (typeof SEARCH_ADAPTER_KINDS)[number];
export type SearchToolKind = SearchAdapterKind | 'group';

/** One normalized hit; items without a URL are dropped by the adapters. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  /** Where the hit came from: the engine (SearXNG) or the site (SearchApi). */
  source: string;
}

export interface SearchResponse {
  /** The tool that was asked (a group's name when a group answered). */
  tool: string;
  query: string;
  /** The adapter kind that actually answered (`searxng`, `searchapi`). */
  source: SearchAdapterKind;
  results: SearchResult[];
}

export interface SearchCallOptions {
  /** Results wanted; the adapter trims the upstream list to it. */
  limit: number;
  /** Overrides the tool's configured timeout for this call, in milliseconds. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Groups only: `false` asks the first member alone. */
  enableFallback?: boolean;
}

export interface SearchTool {
  readonly name: string;
  readonly kind: SearchToolKind;
  search(query: string, options: SearchCallOptions): Promise<SearchResponse>;
  /** Settings for display: never a key, never credentials inside a URL. */
  describe(): Record<string, unknown>;
  close(): Promise<void>;
}

/** Bounds of docs/decisions.md B3 and the tools' own defaults. */
export const SEARCH_DEFAULTS = Object.freeze({
  limit: 5,
  maxLimit: 20,
  maxQueryChars: 2000,
  timeoutMs: 10_000,
  maxResponseBytes: 1024 * 1024,
});

interface AdapterSettingsBase {
  name: string;
  /** Base URL; SearchApi has a default. */
  url?: string;
  /** Milliseconds (default 10000). */
  timeoutMs?: number;
  /** Largest accepted upstream body in bytes (default 1 MiB); a larger answer is an invalid response. */
  maxResponseBytes?: number;
  /** Lets the URL point at loopback, private or link-local addresses, e.g. a local SearXNG (default false). */
  allowPrivateNetwork?: boolean;
}

export interface SearxngToolSettings extends AdapterSettingsBase {
  kind: 'searxng';
  url: string;
  language?: string;
  categories?: string[];
}

export interface SearchApiToolSettings extends AdapterSettingsBase {
  kind: 'searchapi';
  apiKey?: string;
  engine?: string;
  location?: string;
  hl?: string;
  gl?: string;
}

/** A named tool made of ordered members, falling back on connection and rate-limit failures only. */
export interface ToolGroupSettings {
  name: string;
  kind: 'group';
  tools: string[];
}

export type SearchToolSettings = SearxngToolSettings | SearchApiToolSettings | ToolGroupSettings;
