/**
 * SearchApi (hosted): `GET {url}/search?engine=google&q=...[&location=..][&hl=..][&gl=..]` with
 * `Authorization: Bearer <key>`. Hits are in `organic_results` as `link`, `title`, `snippet` and `source`
 * (the site's name). 401 means a bad key, 429 an exhausted plan or rate limit.
 */
import { InvalidResponseError } from '../errors';
import { UpstreamClient } from '../../upstream/upstream-client';
import { displayUrl } from '../../common/display-url';
import { normalizeResults, type RawResult } from './search-results';
import { SEARCH_DEFAULTS, type SearchApiToolSettings, type SearchCallOptions, type SearchResponse, type SearchTool } from './search-tool.interface';
import { checkToolUrl, publicOnlyLookup } from './tool-url-guard';

export const SEARCHAPI_DEFAULT_URL = 'https://www.searchapi.io/api/v1';
export const SEARCHAPI_DEFAULT_ENGINE = 'google';

interface SearchApiBody {
  organic_results?: unknown;
}

interface SearchApiResult {
  link?: unknown;
  title?: unknown;
  snippet?: unknown;
  source?: unknown;
}

export class SearchApiTool implements SearchTool {
  readonly kind = 'searchapi' as const;
  readonly name: string;
  private readonly http: UpstreamClient;
  private readonly url: string;

  constructor(private readonly settings: SearchApiToolSettings) {
    this.name = settings.name;
    this.url = settings.url ?? SEARCHAPI_DEFAULT_URL;
    checkToolUrl(this.url, settings.allowPrivateNetwork === true, `tools.${settings.name}.url`);
    this.http = new UpstreamClient({
      provider: settings.name,
      baseUrl: this.url,
      timeoutMs: settings.timeoutMs ?? SEARCH_DEFAULTS.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes ?? SEARCH_DEFAULTS.maxResponseBytes,
      connections: 8,
      headers: settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {},
      ...(settings.allowPrivateNetwork ? {} : { lookup: publicOnlyLookup }),
    });
  }

  async search(query: string, options: SearchCallOptions): Promise<SearchResponse> {
    const { body } = await this.http.getJson<SearchApiBody>('/search', {
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      query: {
        engine: this.settings.engine ?? SEARCHAPI_DEFAULT_ENGINE,
        q: query,
        location: this.settings.location,
        hl: this.settings.hl,
        gl: this.settings.gl,
      },
    });
    if (body === null || typeof body !== 'object') {
      throw new InvalidResponseError(`${this.name}: SearchApi answered with something other than an object`, { provider: this.name });
    }
    // A query without hits has no organic_results key at all.
    const raw = body.organic_results ?? [];
    if (!Array.isArray(raw)) {
      throw new InvalidResponseError(`${this.name}: SearchApi answered with organic_results that is not a list`, { provider: this.name });
    }
    const items = raw
      .filter((item): item is SearchApiResult => typeof item === 'object' && item !== null)
      .map((item): RawResult => ({ title: item.title, url: item.link, snippet: item.snippet, source: item.source }));
    return { tool: this.name, query, source: this.kind, results: normalizeResults(items, options.limit) };
  }

  describe(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      url: displayUrl(this.url),
      engine: this.settings.engine ?? SEARCHAPI_DEFAULT_ENGINE,
      timeoutMs: this.settings.timeoutMs ?? SEARCH_DEFAULTS.timeoutMs,
      ...(this.settings.location ? { location: this.settings.location } : {}),
      ...(this.settings.hl ? { hl: this.settings.hl } : {}),
      ...(this.settings.gl ? { gl: this.settings.gl } : {}),
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
