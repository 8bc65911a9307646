/**
 * SearXNG (self-hosted metasearch): `GET {url}/search?q=...&format=json[&language=..][&categories=..]`.
 * The JSON format must be enabled in the instance's settings (`search.formats`), else it answers 403.
 * Results carry `url`, `title`, `content` and the `engine` that found them.
 */
import { isObject } from '../../common/json-values';
import { InvalidResponseError, ProviderError } from '../errors';
import { UpstreamClient } from '../../upstream/upstream-client';
import type { UpstreamErrorResponse } from '../../upstream/upstream-types';
import { displayUrl } from '../../common/display-url';
import { normalizeResults, type RawResult } from './search-results';
import { SEARCH_DEFAULTS, type SearchCallOptions, type SearchResponse, type SearchTool, type SearxngToolSettings } from './search-tool.interface';
import { checkToolUrl, publicOnlyLookup } from './tool-url-guard';

interface SearxngBody {
  results?: unknown;
}

interface SearxngResult {
  url?: unknown;
  title?: unknown;
  content?: unknown;
  engine?: unknown;
}

export class SearxngTool implements SearchTool {
  readonly kind = 'searxng' as const;
  readonly name: string;
  private readonly http: UpstreamClient;

  constructor(private readonly settings: SearxngToolSettings) {
    this.name = settings.name;
    checkToolUrl(settings.url, settings.allowPrivateNetwork === true, `tools.${settings.name}.url`);
    this.http = new UpstreamClient({
      provider: settings.name,
      baseUrl: settings.url,
      timeoutMs: settings.timeoutMs ?? SEARCH_DEFAULTS.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes ?? SEARCH_DEFAULTS.maxResponseBytes,
      connections: 8,
      mapError: mapSearxngError,
      ...(settings.allowPrivateNetwork ? {} : { lookup: publicOnlyLookup }),
    });
  }

  async search(query: string, options: SearchCallOptions): Promise<SearchResponse> {
    const { body } = await this.http.getJson<SearxngBody>('/search', {
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      query: {
        q: query,
        format: 'json',
        language: this.settings.language,
        categories: this.settings.categories?.join(','),
      },
    });
    if (body === null || typeof body !== 'object' || !Array.isArray(body.results)) {
      throw new InvalidResponseError(`${this.name}: SearXNG answered without a results list`, { provider: this.name });
    }
    const items = (body.results as unknown[]).filter(isObject).map(
      (item: SearxngResult): RawResult => ({ title: item.title, url: item.url, snippet: item.content, source: item.engine }),
    );
    return { tool: this.name, query, source: this.kind, results: normalizeResults(items, options.limit) };
  }

  describe(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      url: displayUrl(this.settings.url),
      timeoutMs: this.settings.timeoutMs ?? SEARCH_DEFAULTS.timeoutMs,
      ...(this.settings.language ? { language: this.settings.language } : {}),
      ...(this.settings.categories ? { categories: this.settings.categories } : {}),
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** SearXNG has no credentials: its 403 means the instance does not serve the JSON format. */
function mapSearxngError(response: UpstreamErrorResponse): ProviderError | undefined {
  if (response.status !== 403) return undefined;
  return new ProviderError(`${response.provider}: SearXNG refused format=json (403); enable json under search.formats in its settings`, {
    provider: response.provider,
    status: 403,
  });
}
