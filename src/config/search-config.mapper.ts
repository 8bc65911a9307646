/**
 * `tools:`, `search:`, `documents:` and `vector:` sections -> search, document and vector settings. Rules
 * the schema cannot express (which keys each kind needs, group members, the default tool) are checked
 * here, with the key in the message.
 */
import { dirname, resolve } from 'node:path';
import { DEFAULT_DOCUMENT_BOUNDS, type DocumentBounds } from '../ai/documents/document-source.interface';
import type { SearchModuleOptions } from '../ai/tools/search.service';
import { SEARCH_DEFAULTS, type SearchToolSettings } from '../ai/tools/search-tool.interface';
import type { VectorStoreSettings } from '../ai/vector/vector-store.interface';
import { ConfigError } from './config.error';
import type { ConfigDocument, ConfigSource, ToolSection } from './config.types';

/** Where `tollgate vector` keeps its embedded database when the configuration names no data_dir. */
export const DEFAULT_VECTOR_DATA_DIR = '.tollgate/vector';

export function toSearchSettings(document: ConfigDocument, source: string): SearchModuleOptions {
  const problems: string[] = [];
  const search = document.search ?? {};
  const timeoutSeconds = search.timeout ?? SEARCH_DEFAULTS.timeoutMs / 1000;
  const maxResponseBytes = search.max_response_bytes ?? SEARCH_DEFAULTS.maxResponseBytes;
  const entries = Object.entries(document.tools ?? {});
  const adapters = new Set(entries.filter(([, section]) => section.kind === 'searxng' || section.kind === 'searchapi').map(([name]) => name));

  const tools: SearchToolSettings[] = [];
  for (const [name, section] of entries) {
    const tool = toToolSettings(name, section, { timeoutSeconds, maxResponseBytes }, adapters, problems);
    if (tool) tools.push(tool);
  }
  const names = entries.map(([name]) => name);
  if (search.default_tool !== undefined && !names.includes(search.default_tool)) {
    problems.push(`search.default_tool: '${search.default_tool}' is not a configured tool (configured: ${names.join(', ') || 'none'})`);
  }
  const defaultLimit = search.default_limit ?? SEARCH_DEFAULTS.limit;
  const maxLimit = search.max_limit ?? SEARCH_DEFAULTS.maxLimit;
  if (defaultLimit > maxLimit) problems.push(`search.default_limit: must not exceed search.max_limit (${maxLimit})`);
  if (problems.length) throw new ConfigError(problems.map((problem) => `${source}: ${problem}`));

  return {
    tools,
    ...(search.default_tool !== undefined ? { defaultTool: search.default_tool } : {}),
    defaultLimit,
    maxLimit,
    maxQueryChars: search.max_query_chars ?? SEARCH_DEFAULTS.maxQueryChars,
  };
}

function toToolSettings(
  name: string,
  section: ToolSection,
  defaults: { timeoutSeconds: number; maxResponseBytes: number },
  adapters: Set<string>,
  problems: string[],
): SearchToolSettings | undefined {
  const at = `tools.${name}`;
  if (section.kind === undefined) {
    problems.push(`${at}.kind: is required (searxng, searchapi or group)`);
    return undefined;
  }
  const misplaced = (keys: Array<keyof ToolSection>) => {
    for (const key of keys) if (section[key] !== undefined) problems.push(`${at}.${key}: does not apply to kind ${section.kind}`);
  };
  if (section.kind === 'group') {
    misplaced(['url', 'api_key', 'timeout', 'max_response_bytes', 'allow_private_network', 'language', 'categories', 'engine', 'location', 'hl', 'gl']);
    if (!section.tools) {
      problems.push(`${at}.tools: is required for kind group`);
      return undefined;
    }
    section.tools.forEach((member, index) => {
      if (!adapters.has(member)) problems.push(`${at}.tools[${index}]: '${member}' is not a searxng or searchapi tool configured here`);
    });
    return { name, kind: 'group', tools: section.tools };
  }
  // The URL rules (scheme, credentials, private addresses) are checked where the tools are built, so only
  // what uses search (the server, `tollgate search`, `agent`, `mcp`) fails on them: server-start-checks.ts.
  misplaced(['tools']);
  const common = {
    name,
    timeoutMs: Math.round((section.timeout ?? defaults.timeoutSeconds) * 1000),
    maxResponseBytes: section.max_response_bytes ?? defaults.maxResponseBytes,
    allowPrivateNetwork: section.allow_private_network ?? false,
  };
  if (section.kind === 'searxng') {
    misplaced(['api_key', 'engine', 'location', 'hl', 'gl']);
    if (section.url === undefined) {
      problems.push(`${at}.url: is required for kind searxng`);
      return undefined;
    }
    return {
      ...common,
      kind: 'searxng',
      url: section.url,
      ...(section.language !== undefined ? { language: section.language } : {}),
      ...(section.categories !== undefined ? { categories: section.categories } : {}),
    };
  }
  misplaced(['language', 'categories']);
  if (section.api_key === undefined) {
    problems.push(`${at}.api_key: is required for kind searchapi (prefer api_key_env: SEARCHAPI_API_KEY)`);
    return undefined;
  }
  return {
    ...common,
    kind: 'searchapi',
    apiKey: section.api_key,
    ...(section.url !== undefined ? { url: section.url } : {}),
    ...(section.engine !== undefined ? { engine: section.engine } : {}),
    ...(section.location !== undefined ? { location: section.location } : {}),
    ...(section.hl !== undefined ? { hl: section.hl } : {}),
    ...(section.gl !== undefined ? { gl: section.gl } : {}),
  };
}

export function toDocumentBounds(document: ConfigDocument): DocumentBounds {
  return {
    maxDocuments: document.documents?.max_documents ?? DEFAULT_DOCUMENT_BOUNDS.maxDocuments,
    maxBytes: document.documents?.max_bytes ?? DEFAULT_DOCUMENT_BOUNDS.maxBytes,
  };
}

/** pglite's data_dir is relative to the configuration file; without one, .tollgate/vector in the working directory. */
export function toVectorSettings(document: ConfigDocument, context: ConfigSource): VectorStoreSettings {
  const vector = document.vector ?? {};
  const backend = vector.backend ?? 'pglite';
  const problems: string[] = [];
  if (backend === 'postgres' && vector.url === undefined) problems.push('vector.url: is required for backend postgres');
  if (backend === 'pglite' && vector.url !== undefined) problems.push('vector.url: does not apply to backend pglite (use data_dir)');
  if (backend === 'postgres' && vector.data_dir !== undefined) problems.push('vector.data_dir: does not apply to backend postgres');
  if (problems.length) throw new ConfigError(problems.map((problem) => `${context.source}: ${problem}`));
  const base = vector.data_dir !== undefined && context.filePath ? dirname(context.filePath) : context.cwd;
  return {
    backend,
    ...(backend === 'postgres' ? { url: vector.url } : { dataDir: resolve(base, vector.data_dir ?? DEFAULT_VECTOR_DATA_DIR) }),
    ...(vector.table !== undefined ? { table: vector.table } : {}),
    ...(vector.dimensions !== undefined ? { dimensions: vector.dimensions } : {}),
    ...(vector.metric !== undefined ? { metric: vector.metric } : {}),
    ...(vector.max_limit !== undefined ? { maxLimit: vector.max_limit } : {}),
  };
}
