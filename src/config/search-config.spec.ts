import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { problemsOf } from '../../test/support/config-problems';
import { loadConfig } from './config.loader';

describe('search, documents and vector configuration', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-search-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function load(yaml: string | undefined, env: NodeJS.ProcessEnv = {}) {
    if (yaml === undefined) return loadConfig({ cwd: dir, env });
    writeFileSync(join(dir, 'tollgate.yaml'), yaml);
    return loadConfig({ cwd: dir, env, configPath: 'tollgate.yaml' });
  }

  it('defaults: no tools, limit 5 of at most 20, 2000-character queries, 100 documents / 1 MiB, pglite vectors', () => {
    const config = load(undefined);
    expect(config.ai.search).toEqual({ tools: [], defaultLimit: 5, maxLimit: 20, maxQueryChars: 2000 });
    expect(config.ai.documents).toEqual({ maxDocuments: 100, maxBytes: 1048576 });
    expect(config.vector).toEqual({ backend: 'pglite', dataDir: join(dir, '.tollgate/vector') });
  });

  it('SEARXNG_URL registers a searxng tool named web_search; SEARXNG_ALLOW_PRIVATE_NETWORK allows a local one', () => {
    const { ai } = load(undefined, { SEARXNG_URL: 'http://127.0.0.1:8888', SEARXNG_ALLOW_PRIVATE_NETWORK: 'true' });
    expect(ai.search.tools).toEqual([
      { name: 'web_search', kind: 'searxng', url: 'http://127.0.0.1:8888', timeoutMs: 10_000, maxResponseBytes: 1048576, allowPrivateNetwork: true },
    ]);
  });

  it('SEARXNG_URL overrides the url of a web_search entry in the YAML and keeps its other keys', () => {
    const { ai } = load('version: 1\ntools:\n  web_search: { kind: searxng, url: "http://old.example:1", language: fr, timeout: 3 }\n', {
      SEARXNG_URL: 'https://searx.example.org',
    });
    expect(ai.search.tools[0]).toMatchObject({ url: 'https://searx.example.org', language: 'fr', timeoutMs: 3000, allowPrivateNetwork: false });
  });

  it('maps tools with search-level defaults, per-tool overrides and groups; api_key_env references', () => {
    const { ai } = load(
      [
        'version: 1',
        'search: { timeout: 4, max_response_bytes: 4096, default_tool: both, default_limit: 3, max_limit: 10, max_query_chars: 300 }',
        'tools:',
        '  local: { kind: searxng, url: "http://127.0.0.1:8888", allow_private_network: true, categories: [general] }',
        '  hosted: { kind: searchapi, api_key_env: SEARCHAPI_API_KEY, engine: bing, hl: en, gl: us, timeout: 9 }',
        '  both: { kind: group, tools: [local, hosted] }',
        '',
      ].join('\n'),
      { SEARCHAPI_API_KEY: 'k-123' },
    );
    expect(ai.search).toEqual({
      tools: [
        { name: 'local', kind: 'searxng', url: 'http://127.0.0.1:8888', timeoutMs: 4000, maxResponseBytes: 4096, allowPrivateNetwork: true, categories: ['general'] },
        { name: 'hosted', kind: 'searchapi', apiKey: 'k-123', engine: 'bing', hl: 'en', gl: 'us', timeoutMs: 9000, maxResponseBytes: 4096, allowPrivateNetwork: false },
        { name: 'both', kind: 'group', tools: ['local', 'hosted'] },
      ],
      defaultTool: 'both',
      defaultLimit: 3,
      maxLimit: 10,
      maxQueryChars: 300,
    });
  });

  it('names the key of every tool problem', () => {
    const problems = problemsOf(() =>
      load(
        [
          'version: 1',
          'search: { default_tool: missing, default_limit: 30, max_limit: 20 }',
          'tools:',
          '  a: { url: "http://x.example" }',
          '  b: { kind: searxng }',
          '  c: { kind: searchapi, language: en }',
          '  d: { kind: group, tools: [b, nope], url: "http://x.example" }',
          '  e: { kind: group }',
          '',
        ].join('\n'),
      ),
    );
    expect(problems).toEqual([
      'tollgate.yaml: tools.a.kind: is required (searxng, searchapi or group)',
      'tollgate.yaml: tools.b.url: is required for kind searxng',
      'tollgate.yaml: tools.c.language: does not apply to kind searchapi',
      'tollgate.yaml: tools.c.api_key: is required for kind searchapi (prefer api_key_env: SEARCHAPI_API_KEY)',
      'tollgate.yaml: tools.d.url: does not apply to kind group',
      "tollgate.yaml: tools.d.tools[1]: 'nope' is not a searxng or searchapi tool configured here",
      'tollgate.yaml: tools.e.tools: is required for kind group',
      "tollgate.yaml: search.default_tool: 'missing' is not a configured tool (configured: a, b, c, d, e)",
      'tollgate.yaml: search.default_limit: must not exceed search.max_limit (20)',
    ]);
  });

  it('schema errors name tools keys and values that cannot be right', () => {
    const problems = problemsOf(() => load('version: 1\ntools:\n  "bad name": { kind: searxng }\n  x: { kind: bing, url: "ftp://a" }\n'));
    expect(problems).toEqual(
      expect.arrayContaining([
        'tollgate.yaml: tools: tool name "bad name" must use letters, digits, "_" or "-"',
        'tollgate.yaml: tools.x.kind: must be one of searxng, searchapi, group',
        'tollgate.yaml: tools.x.url: must be an http:// or https:// URL',
      ]),
    );
  });

  it('documents and vector sections', () => {
    const config = load('version: 1\ndocuments: { max_documents: 10, max_bytes: 2048 }\nvector: { data_dir: data/vec, dimensions: 3, metric: euclidean, table: docs }\n');
    expect(config.ai.documents).toEqual({ maxDocuments: 10, maxBytes: 2048 });
    expect(config.vector).toEqual({ backend: 'pglite', dataDir: join(dir, 'data/vec'), dimensions: 3, metric: 'euclidean', table: 'docs' });
    const postgres = load('version: 1\nvector: { backend: postgres, url: "postgres://postgres@127.0.0.1:5432/test" }\n');
    expect(postgres.vector).toEqual({ backend: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/test' });
    expect(problemsOf(() => load('version: 1\nvector: { backend: postgres }\n'))).toEqual(['tollgate.yaml: vector.url: is required for backend postgres']);
    expect(problemsOf(() => load('version: 1\nvector: { table: "Bad-Name" }\n'))).toEqual([
      'tollgate.yaml: vector.table: must be a lower-case SQL identifier (a-z, digits, underscore; at most 40 characters)',
    ]);
  });
});
