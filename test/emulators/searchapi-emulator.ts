/**
 * Emulates SearchApi's `GET /api/v1/search` (engine google): Bearer or api_key authentication with the real
 * 401 body, search_metadata / search_parameters / search_information / organic_results (position, title,
 * link, source, domain, displayed_link, snippet, snippet_highlighted_words, favicon), no organic_results key
 * for a query without hits, 429 and 5xx with JSON `{"error": ...}` bodies carrying {@link SEARCH_UPSTREAM_MARKER}.
 */
import { EmulatorReply, EmulatorRequest, EmulatorServer, startEmulator } from './emulator-server';
import { type EmulatedHit, hitsFor, SEARCH_UPSTREAM_MARKER } from './searxng-emulator';

export class SearchApiEmulator {
  hits?: EmulatedHit[];
  private oversized = 0;

  private constructor(readonly server: EmulatorServer, private readonly apiKey: string) {}

  static async start(apiKey: string): Promise<SearchApiEmulator> {
    const emulator = new SearchApiEmulator(await startEmulator(), apiKey);
    emulator.server.route('GET', '/api/v1/search', (request) => emulator.search(request));
    return emulator;
  }

  /** The base URL a searchapi tool is configured with. */
  get url(): string {
    return `${this.server.url}/api/v1`;
  }

  oversizedNext(times = 1): void {
    this.oversized += times;
  }

  rateLimitNext(times = 1): void {
    this.server.inject(
      { kind: 'status', status: 429, body: { error: `You have exceeded the rate limit. ${SEARCH_UPSTREAM_MARKER}` } },
      times,
    );
  }

  reset(): void {
    this.server.reset();
    this.hits = undefined;
    this.oversized = 0;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private search(request: EmulatorRequest): EmulatorReply {
    const key = request.headers.authorization?.replace(/^Bearer /, '') ?? request.query.get('api_key');
    if (key !== this.apiKey) {
      return {
        status: 401,
        body: { error: `Invalid API key. Your API key should be here: https://www.searchapi.io/api_key ${SEARCH_UPSTREAM_MARKER}` },
      };
    }
    const query = request.query.get('q');
    if (!query) return { status: 400, body: { error: `Missing query \`q\` parameter. ${SEARCH_UPSTREAM_MARKER}` } };
    const engine = request.query.get('engine') ?? 'google';
    const hits = this.hits ?? hitsFor(query);
    const organic = hits.map((hit, index) => ({
      position: index + 1,
      title: hit.title,
      ...(hit.url !== undefined ? { link: hit.url, domain: new URL(hit.url).hostname, displayed_link: `${new URL(hit.url).origin} › ${index + 1}` } : {}),
      source: hit.source,
      snippet: hit.snippet,
      snippet_highlighted_words: [query],
      favicon: 'data:image/png;base64,iVBORw0KGgo=',
    }));
    if (this.oversized > 0) {
      this.oversized -= 1;
      organic.push({ ...organic[0], snippet: 'y'.repeat(2 * 1024 * 1024) });
    }
    return {
      body: {
        search_metadata: {
          id: 'search_emulated',
          status: 'Success',
          created_at: '2025-01-01T00:00:00Z',
          request_time_taken: 0.8,
          parsing_time_taken: 0.02,
          total_time_taken: 0.82,
          request_url: `https://www.google.com/search?q=${encodeURIComponent(query)}`,
        },
        search_parameters: {
          engine,
          q: query,
          device: 'desktop',
          google_domain: 'google.com',
          ...(request.query.get('location') ? { location: request.query.get('location') } : {}),
          hl: request.query.get('hl') ?? 'en',
          gl: request.query.get('gl') ?? 'us',
        },
        search_information: { query_displayed: query, total_results: organic.length * 1000, time_taken_displayed: 0.31 },
        ...(organic.length > 0 ? { organic_results: organic } : {}),
      },
    };
  }
}
