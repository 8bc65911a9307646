/**
 * Emulates a SearXNG instance's `GET /search?format=json`: the real answer shape (query, number_of_results,
 * results with url/title/content/engine/engines/parsed_url/positions/score/category, answers, corrections,
 * infoboxes, suggestions, unresponsive_engines), 403 when format=json is not enabled, 429 from its limiter
 * (an HTML page, as SearXNG sends it), and oversized answers. Error bodies carry {@link SEARCH_UPSTREAM_MARKER}.
 */
import { EmulatorReply, EmulatorRequest, EmulatorServer, startEmulator } from './emulator-server';

export const SEARCH_UPSTREAM_MARKER = 'SEARCH-UPSTREAM-MARKER-51c9';

export interface EmulatedHit {
  url?: string;
  title: string;
  snippet: string;
  /** SearXNG: the engine; SearchApi: the site name. */
  source: string;
}

/** Ten hits for any query, the third without a URL (engines do return such items). */
export function hitsFor(query: string, count = 10): EmulatedHit[] {
  return Array.from({ length: count }, (_, index) => ({
    ...(index === 2 ? {} : { url: `https://example.org/${encodeURIComponent(query)}/${index + 1}` }),
    title: `Result ${index + 1} for ${query}`,
    snippet: `Snippet ${index + 1}\n   about  ${query}.`,
    source: index % 2 === 0 ? 'duckduckgo' : 'brave',
  }));
}

export class SearxngEmulator {
  /** Replaces the hits of the next answers; default {@link hitsFor}. */
  hits?: EmulatedHit[];
  private oversized = 0;

  private constructor(readonly server: EmulatorServer, private readonly jsonEnabled: boolean) {}

  static async start(options: { jsonEnabled?: boolean } = {}): Promise<SearxngEmulator> {
    const emulator = new SearxngEmulator(await startEmulator(), options.jsonEnabled ?? true);
    emulator.server.route('GET', '/search', (request) => emulator.search(request));
    return emulator;
  }

  get url(): string {
    return this.server.url;
  }

  /** The next `times` answers are valid JSON of more than 2 MiB. */
  oversizedNext(times = 1): void {
    this.oversized += times;
  }

  /** SearXNG's limiter answers 429 with an HTML page. */
  rateLimitNext(times = 1): void {
    this.server.inject(
      { kind: 'status', status: 429, body: `<html><body>Too Many Requests ${SEARCH_UPSTREAM_MARKER}</body></html>`, headers: { 'content-type': 'text/html' } },
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
    const query = request.query.get('q') ?? '';
    if (request.query.get('format') !== 'json' || !this.jsonEnabled) {
      return { status: 403, body: `403 Forbidden ${SEARCH_UPSTREAM_MARKER}`, headers: { 'content-type': 'text/html' } };
    }
    if (query === '') return { status: 400, body: `Bad Request ${SEARCH_UPSTREAM_MARKER}` };
    const hits = this.hits ?? hitsFor(query);
    const results = hits.map((hit, index) => ({
      ...(hit.url !== undefined ? { url: hit.url, parsed_url: parsedUrl(hit.url) } : {}),
      title: hit.title,
      content: hit.snippet,
      engine: hit.source,
      engines: [hit.source, 'google'],
      template: 'default.html',
      positions: [index + 1],
      score: Math.round((2 / (index + 1)) * 1000) / 1000,
      category: request.query.get('categories')?.split(',')[0] ?? 'general',
      publishedDate: null,
      thumbnail: '',
    }));
    if (this.oversized > 0) {
      this.oversized -= 1;
      results.push({ ...results[0], content: 'x'.repeat(2 * 1024 * 1024) });
    }
    return {
      body: {
        query,
        number_of_results: 0,
        results,
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [`${query} meaning`],
        unresponsive_engines: [['qwant', 'timeout']],
      },
    };
  }
}

function parsedUrl(url: string): string[] {
  const parsed = new URL(url);
  return [parsed.protocol.replace(':', ''), parsed.host, parsed.pathname, '', parsed.search.replace('?', ''), ''];
}
