/**
 * `tollgate vector install|upsert|search` as subprocesses of the built CLI on the embedded PGlite backend
 * (data in the working directory's .tollgate/vector), with `--embed` going through an OpenAI emulator.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { buildDistIfStale, runCli } from './support/cli-run';

const KEY = 'sk-vector-cli-KEY-6610';

let work: string;
let openai: OpenAiEmulator;

/** `tollgate vector ARGS` in the scratch directory, with the emulator for `--embed`. */
function tollgate(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const env = { OPENAI_API_KEY: KEY, OPENAI_URL: openai.url, OPENAI_EMBEDDING_MODEL: 'embed-test', OPENAI_CHAT_MODEL: 'gpt-test', ...extraEnv };
  return runCli(['vector', ...args], { cwd: work, env, timeoutMs: 60_000 });
}

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-vector-cli-'));
  openai = await OpenAiEmulator.start({ apiKey: KEY, dimensions: 4 });
}, 120_000);

afterAll(async () => {
  await openai.close();
  rmSync(work, { recursive: true, force: true });
});

describe('tollgate vector', () => {
  jest.setTimeout(90_000);

  it('install creates the table and index in .tollgate/vector, and is idempotent', async () => {
    const run = await tollgate(['install', '--dimensions', '4']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('installed table tollgate_vectors (4 dimensions) on PGlite with a cosine HNSW index\n');
    expect(run.status).toBe(0);
    expect(existsSync(join(work, '.tollgate', 'vector'))).toBe(true);
    expect((await tollgate(['install', '--dimensions', '4', '--no-index'])).stdout).toBe('installed table tollgate_vectors (4 dimensions) on PGlite\n');
  });

  it('does not fail on search settings it does not use (a loopback SEARXNG_URL without SEARXNG_ALLOW_PRIVATE_NETWORK)', async () => {
    const run = await tollgate(['install', '--dimensions', '4'], { SEARXNG_URL: 'http://127.0.0.1:8888' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('upserts from --embedding and from --embed, and searches both ways', async () => {
    const raw = await tollgate(['upsert', 'manual', '--embedding', '[1,0,0,0]', '--content', 'hand made', '--metadata', '{"lang":"en"}']);
    expect(raw.stdout).toBe('upserted manual (4 dimensions, external/external)\n');
    const embedded = await tollgate(['upsert', 'greeting', '--embed', 'hello world']);
    expect(embedded.stdout).toBe('upserted greeting (4 dimensions, openai/embed-test)\n');
    expect(openai.server.requestsTo('/v1/embeddings')).toHaveLength(1);

    const byVector = await tollgate(['search', '--embedding', '[1,0,0,0]', '--limit', '1', '--format', 'json']);
    expect(byVector.status).toBe(0);
    const body = JSON.parse(byVector.stdout);
    expect(body.count).toBe(1);
    expect(body.matches[0]).toMatchObject({ id: 'manual', provider: 'external', model: 'external', content: 'hand made', metadata: { lang: 'en' }, score: 1, distance: 0 });

    // --embed compares only vectors of the same provider and model.
    const byText = await tollgate(['search', '--embed', 'hello world']);
    expect(byText.status).toBe(0);
    expect(byText.stdout).toBe('1. greeting  score 1.0000  openai/embed-test  hello world\n');
  });

  it.each([
    ['a vector of the wrong length', ['upsert', 'x', '--embedding', '[1,2]'], 'tollgate: embedding must have exactly 4 dimensions (got 2)\n'],
    ['a non-finite value', ['upsert', 'x', '--embedding', '[1,2,3,"4"]'], 'tollgate: embedding[3] must be a finite number\n'],
    ['no vector', ['search'], 'tollgate: search: give exactly one of --embedding JSON or --embed TEXT\n'],
    ['two vectors', ['search', '--embedding', '[1,0,0,0]', '--embed', 'x'], 'tollgate: search: give exactly one of --embedding JSON or --embed TEXT\n'],
    ['a limit over max_limit', ['search', '--embedding', '[1,0,0,0]', '--limit', '500'], 'tollgate: limit must be an integer from 1 to 100\n'],
    ['an unknown metric', ['search', '--embedding', '[1,0,0,0]', '--metric', 'dot'], /^tollgate: --metric must be one of cosine, euclidean, inner_product \(got "dot"\)/],
    ['an unsafe table name', ['search', '--embedding', '[1,0,0,0]', '--table', 'x;drop'], /^tollgate: --table must be a lower-case SQL identifier .*got "x;drop"\n$/],
    ['metadata that is not an object', ['upsert', 'x', '--embedding', '[1,0,0,0]', '--metadata', '[1]'], 'tollgate: --metadata must be a JSON object\n'],
    ['no subcommand', [], /tollgate: vector: missing subcommand \(install, upsert, search\)\n$/],
  ])('exit 2 for %s', async (_, args, message) => {
    const run = await tollgate(args as string[]);
    if (typeof message === 'string') expect(run.stderr).toBe(message);
    else expect(run.stderr).toMatch(message);
    expect(run.status).toBe(2);
  });

  it('exit 2 when install has no dimensions; exit 1 when the table was never installed', async () => {
    const install = await tollgate(['install', '--table', 'fresh']);
    expect(install.stderr).toBe('tollgate: dimensions must be set to install a vector table (vector.dimensions or --dimensions)\n');
    expect(install.status).toBe(2);
    const search = await tollgate(['search', '--table', 'never', '--embedding', '[1,0,0,0]']);
    expect(search.stderr).toBe('tollgate: table never does not exist; run install first (tollgate vector install)\n');
    expect(search.status).toBe(1);
  });
});
