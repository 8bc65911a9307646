/**
 * `tollgate search` and `tollgate generate --json-file` as subprocesses of the built CLI against loopback
 * SearXNG and OpenAI emulators: text and JSON output, opt-in generation, exit codes 0/1/2 and messages.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiEmulator, UPSTREAM_MARKER } from './emulators/openai-emulator';
import { SEARCH_UPSTREAM_MARKER, SearxngEmulator } from './emulators/searxng-emulator';
import { buildDistIfStale, expectNoLeak, runCli } from './support/cli-run';

const KEY = 'sk-search-cli-KEY-2231';
const SECRETS = [KEY, UPSTREAM_MARKER, SEARCH_UPSTREAM_MARKER];

let work: string;
let searxng: SearxngEmulator;
let openai: OpenAiEmulator;

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  OPENAI_API_KEY: KEY,
  OPENAI_URL: openai.url,
  OPENAI_CHAT_MODEL: 'gpt-test',
  SEARXNG_URL: searxng.url,
  SEARXNG_ALLOW_PRIVATE_NETWORK: 'true',
  ...extra,
});

const tollgate = (args: string[], environment: NodeJS.ProcessEnv = env(), stdin?: string) => runCli(args, { cwd: work, env: environment, stdin });

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-search-cli-'));
  [searxng, openai] = await Promise.all([SearxngEmulator.start(), OpenAiEmulator.start({ apiKey: KEY })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([searxng.close(), openai.close()]);
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  searxng.reset();
  openai.server.reset();
});

describe('tollgate search', () => {
  it('prints numbered results with URL, snippet and source, and contacts no AI provider', async () => {
    const run = await tollgate(['search', 'rust traits', '--limit', '2']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      '1. Result 1 for rust traits\n   https://example.org/rust%20traits/1\n   Snippet 1 about rust traits.\n   (duckduckgo)\n\n' +
        '2. Result 2 for rust traits\n   https://example.org/rust%20traits/2\n   Snippet 2 about rust traits.\n   (brave)\n',
    );
    expect(run.stderr).toBe('');
    expect(searxng.server.lastRequest!.query.get('q')).toBe('rust traits');
    expect(openai.server.requests).toHaveLength(0);
  });

  it('--format json gives the shape of POST /v1/search; the query can come from stdin', async () => {
    const run = await tollgate(['search', '--format', 'json', '--tool', 'web_search'], env(), 'piped query\n');
    expect(run.status).toBe(0);
    const body = JSON.parse(run.stdout);
    expect(body).toMatchObject({ tool: 'web_search', source: 'searxng', query: 'piped query', count: 5 });
    expect(body.results[0]).toEqual({ title: 'Result 1 for piped query', url: 'https://example.org/piped%20query/1', snippet: 'Snippet 1 about piped query.', source: 'duckduckgo' });
  });

  it('--generate answers over the results and lists them as sources', async () => {
    const run = await tollgate(['search', 'what is wasm', '--generate', '--limit', '1']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/\n\nSources:\n\[1\] Result 1 for what is wasm - https:\/\/example\.org\/what%20is%20wasm\/1\n$/);
    const sent = openai.server.requestsTo('/v1/chat/completions')[0].body as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages.find((m) => m.role === 'user')!.content).toContain('[1] title: Result 1 for what is wasm');
    const json = await tollgate(['search', 'what is wasm', '--generate', '--format', 'json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ tool: 'web_search', count: 5, provider: 'openai', model: 'gpt-test', response: expect.any(String) });
  });

  it.each([
    ['a limit that is not a number', ['search', 'q', '--limit', 'many'], /^tollgate: --limit must be a positive integer \(got "many"\)\n$/],
    ['a limit over search.max_limit', ['search', 'q', '--limit', '50'], /^tollgate: limit must be an integer from 1 to 20\n$/],
    ['an unknown tool', ['search', 'q', '--tool', 'ghost'], /^tollgate: tool 'ghost' is not configured \(configured: web_search\)\n$/],
    ['an unknown provider', ['search', 'q', '--generate', '--provider', 'ghost'], /^tollgate: unknown provider 'ghost'/],
    ['a query over 2000 characters', ['search', 'x'.repeat(2001)], /^tollgate: query must be at most 2000 characters\n$/],
  ])('exit 2 for %s', async (_, args, message) => {
    const run = await tollgate(args as string[]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
    expect(searxng.server.requests).toHaveLength(0);
  });

  it('exit 2 saying how to configure a tool when none is', async () => {
    const run = await tollgate(['search', 'q'], env({ SEARXNG_URL: '' }));
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('tollgate: no search tool is configured (set SEARXNG_URL, or add a tools: section to the configuration)\n');
  });

  it('exit 1 with a sanitized message when the tool fails', async () => {
    searxng.server.failNext(500, { body: { error: SEARCH_UPSTREAM_MARKER } });
    const run = await tollgate(['search', 'q']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('tollgate: web_search: upstream returned 500\n');
    expectNoLeak(run, SECRETS);
  });

  it('exit 1 naming the key when SEARXNG_URL is a private address that is not allowed', async () => {
    const run = await tollgate(['search', 'q'], env({ SEARXNG_ALLOW_PRIVATE_NETWORK: '' }));
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^tollgate: configuration: tools\.web_search\.url: points at a loopback, private or link-local address.*SEARXNG_ALLOW_PRIVATE_NETWORK=true/);
  });
});

describe('tollgate generate --json-file', () => {
  it('uses the documents as context', async () => {
    writeFileSync(join(work, 'docs.json'), JSON.stringify([{ title: 'Handbook', body: 'Deploys happen on Tuesdays.' }, 'Rollbacks take 5 minutes.']));
    const run = await tollgate(['generate', 'When do deploys happen?', '--json-file', 'docs.json']);
    expect(run.status).toBe(0);
    const sent = openai.server.lastRequest!.body as { messages: Array<{ role: string; content: string }> };
    expect(sent.messages.find((m) => m.role === 'user')!.content).toContain('[1] title: Handbook\nbody: Deploys happen on Tuesdays.\n\n[2] Rollbacks take 5 minutes.');
  });

  it('exit 2 with the bound or the problem named, before any provider call', async () => {
    writeFileSync(join(work, 'many.json'), JSON.stringify(Array.from({ length: 101 }, (_, i) => `doc ${i}`)));
    writeFileSync(join(work, 'broken.json'), '[{"title": ');
    writeFileSync(join(work, 'small.yaml'), 'version: 1\ndocuments: { max_bytes: 10 }\n');
    const cases: Array<[string[], string]> = [
      [['--json-file', 'many.json'], 'tollgate: --json-file: holds 101 documents, more than the limit of 100\n'],
      [['--json-file', 'broken.json'], 'tollgate: --json-file: is not valid JSON\n'],
      [['--json-file', 'absent.json'], 'tollgate: --json-file: absent.json: no such file\n'],
      [['--json-file', 'many.json', '--config', 'small.yaml'], 'tollgate: --json-file: 901 bytes is more than the 10-byte limit for document sources\n'],
    ];
    for (const [args, message] of cases) {
      const run = await tollgate(['generate', 'q', ...args]);
      expect(run.stderr).toBe(message);
      expect(run.status).toBe(2);
    }
    expect(openai.server.requests).toHaveLength(0);
  });
});
