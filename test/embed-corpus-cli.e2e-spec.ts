/**
 * `tollgate embed --file` as a subprocess of the built CLI against an OpenAI emulator: batching, bad lines
 * reported with their numbers, retries through the AiClient, failed batches, resumption from an output
 * JSONL and from the embedded PGlite vector store, exit codes and the summary.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAiEmulator, UPSTREAM_MARKER, vectorFor } from './emulators/openai-emulator';
import { buildDistIfStale, CLI, expectNoLeak, runCli } from './support/cli-run';

const KEY = 'sk-embed-corpus-KEY-4412';

let work: string;
let openai: OpenAiEmulator;

/** The CLI against the emulator, with the short-retry configuration; `env` adds to or overrides that environment. */
function tollgate(args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCli(args, {
    cwd: work,
    env: {
      OPENAI_API_KEY: KEY,
      OPENAI_URL: openai.url,
      OPENAI_EMBEDDING_MODEL: 'embed-test',
      OPENAI_CHAT_MODEL: 'gpt-test',
      TOLLGATE_CONFIG: join(work, 'tollgate.yaml'),
      ...env,
    },
    timeoutMs: 120_000,
  });
}

const line = (id: string, text: string, metadata?: Record<string, unknown>) => JSON.stringify(metadata ? { id, text, metadata } : { id, text });

function corpus(name: string, lines: string[]): string {
  const path = join(work, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

function outputRecords(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((text) => text !== '')
    .map((text) => JSON.parse(text) as Record<string, unknown>);
}

const embeddingCalls = () => openai.server.requestsTo('/v1/embeddings');
const inputsSent = () => embeddingCalls().map((request) => (request.body as { input: string[] }).input);

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-embed-corpus-'));
  // Short retry waits keep the retry case fast; the rules are the AiClient's.
  writeFileSync(join(work, 'tollgate.yaml'), 'version: 1\nai:\n  retry_delay: 0.05\n');
  openai = await OpenAiEmulator.start({ apiKey: KEY, dimensions: 4 });
}, 120_000);

afterAll(async () => {
  await openai.close();
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => openai.server.reset());

describe('tollgate embed --file --out', () => {
  jest.setTimeout(240_000);

  it('embeds in batches, reports bad lines by number, exits 1 for them, and resumes from the output file', async () => {
    const file = corpus('mixed.jsonl', [
      line('a', 'alpha', { lang: 'en' }),
      '{"id": "b", "text": ',
      line('b', 'bravo'),
      '',
      JSON.stringify({ id: 'c' }),
      line('c', 'charlie'),
      line('a', 'again'),
      JSON.stringify({ id: 'd', text: 'delta', extra: 1 }),
      line('d', 'delta'),
      line('e', 'echo'),
      '[1,2]',
    ]);
    const out = join(work, 'mixed.out.jsonl');
    const run = await tollgate(['embed', '--file', file, '--out', out, '--batch-size', '2', '--concurrency', '2']);
    expect(run.stderr).toContain('tollgate: mixed.jsonl:2: not valid JSON (skipped)\n');
    expect(run.stderr).toContain('tollgate: mixed.jsonl:5: text must be a non-empty string (skipped)\n');
    expect(run.stderr).toContain('tollgate: mixed.jsonl:7: duplicate id (first on line 1) (skipped)\n');
    expect(run.stderr).toContain('tollgate: mixed.jsonl:8: unknown field "extra" (allowed: id, text, metadata) (skipped)\n');
    expect(run.stderr).toContain('tollgate: mixed.jsonl:11: must be a JSON object (skipped)\n');
    // Not a terminal: plain progress lines, the last one complete.
    expect(run.stderr).toContain('progress: 10/10 lines (100%), embedded 5, already stored 0, bad 5, failed 0\n');
    expect(run.stderr).toContain('tollgate: 5 bad lines skipped, 0 records not embedded; fix them and run again to resume\n');
    expect(run.stdout).toMatch(/^10 lines: embedded 5, already stored 0, bad 5, failed 0 with openai\/embed-test \(4 dimensions\) into .*mixed\.out\.jsonl in \d+\.\d s\n$/);
    expect(run.status).toBe(1);

    expect(inputsSent().flat().sort()).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect(inputsSent().every((inputs) => inputs.length <= 2)).toBe(true);
    expect(embeddingCalls()).toHaveLength(3);
    const records = outputRecords(out);
    expect(records.map((record) => record.id).sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(records.find((record) => record.id === 'a')).toEqual({
      id: 'a',
      provider: 'openai',
      model: 'embed-test',
      dimensions: 4,
      embedding: vectorFor('alpha', 4),
      text: 'alpha',
      metadata: { lang: 'en' },
    });

    openai.server.reset();
    const again = await tollgate(['embed', '--file', file, '--out', out, '--format', 'json']);
    expect(embeddingCalls()).toHaveLength(0);
    const summary = JSON.parse(again.stdout);
    expect(summary).toMatchObject({ lines: 10, embedded: 0, already_stored: 5, bad: 5, failed: 0, destination: out });
    expect(summary.bad_lines).toEqual([
      { line: 2, problem: 'not valid JSON' },
      { line: 5, problem: 'text must be a non-empty string' },
      { line: 7, problem: 'duplicate id (first on line 1)' },
      { line: 8, problem: 'unknown field "extra" (allowed: id, text, metadata)' },
      { line: 11, problem: 'must be a JSON object' },
    ]);
    expect(again.status).toBe(1);
    expect(outputRecords(out)).toHaveLength(5);
  });

  it('exits 0 on a clean corpus; a re-run with new lines embeds only those; a cut-off last output line is embedded again', async () => {
    const lines = Array.from({ length: 7 }, (_, index) => line(`doc-${index}`, `text number ${index}`));
    const file = corpus('clean.jsonl', lines);
    const out = join(work, 'clean.out.jsonl');
    // One batch at a time, so the output's last line is doc-6's (batches in flight are written as they finish).
    const first = await tollgate(['embed', '--file', file, '--out', out, '--batch-size', '3', '--concurrency', '1']);
    expect(first.stderr).not.toContain('tollgate:');
    expect(first.stderr).toMatch(/^progress: \d\/7 lines .*\n(progress: .*\n)*progress: 7\/7 lines \(100%\), embedded 7, already stored 0, bad 0, failed 0\n$/);
    expect(first.status).toBe(0);
    expect(embeddingCalls()).toHaveLength(3);

    // A crash mid-write leaves a partial line: it is dropped and its record embedded again.
    const written = readFileSync(out, 'utf8');
    writeFileSync(out, written.slice(0, written.length - 20));
    appendFileSync(file, `${line('doc-7', 'text number 7')}\n`);
    openai.server.reset();
    const second = await tollgate(['embed', '--file', file, '--out', out]);
    expect(second.stdout).toMatch(/^8 lines: embedded 2, already stored 6, bad 0, failed 0 /);
    expect(second.status).toBe(0);
    expect(inputsSent()).toEqual([[JSON.parse(lines[6]).text, 'text number 7']]);
    const records = outputRecords(out);
    expect(records.map((record) => record.id)).toEqual(['doc-0', 'doc-1', 'doc-2', 'doc-3', 'doc-4', 'doc-5', 'doc-6', 'doc-7']);
  });

  it('retries a rate-limited batch through the AiClient; a failed batch is reported, the rest goes on, and a re-run finishes it', async () => {
    const file = corpus('flaky.jsonl', ['one', 'two', 'three', 'four'].map((text) => line(text, text)));
    const out = join(work, 'flaky.out.jsonl');
    openai.rateLimitNext('0', 1);
    const retried = await tollgate(['embed', '--file', file, '--out', out, '--batch-size', '2', '--concurrency', '1']);
    expect(retried.status).toBe(0);
    expect(embeddingCalls()).toHaveLength(3);
    expect(outputRecords(out)).toHaveLength(4);

    const second = corpus('flaky2.jsonl', ['five', 'six', 'seven', 'eight'].map((text) => line(text, text)));
    const out2 = join(work, 'flaky2.out.jsonl');
    openai.server.reset();
    openai.serverErrorNext(503, 1);
    const failed = await tollgate(['embed', '--file', second, '--out', out2, '--batch-size', '2', '--concurrency', '1']);
    expect(failed.stderr).toContain('tollgate: flaky2.jsonl: lines 1, 2 not embedded: provider_error: ');
    expect(failed.stderr).toContain('tollgate: 0 bad lines skipped, 2 records not embedded; fix them and run again to resume\n');
    expect(failed.stderr).not.toContain(UPSTREAM_MARKER);
    expect(failed.stdout).toMatch(/^4 lines: embedded 2, already stored 0, bad 0, failed 2 /);
    expect(failed.status).toBe(1);

    openai.server.reset();
    const resumed = await tollgate(['embed', '--file', second, '--out', out2, '--batch-size', '2']);
    expect(resumed.status).toBe(0);
    expect(inputsSent()).toEqual([['five', 'six']]);
    expect(outputRecords(out2).map((record) => record.id).sort()).toEqual(['eight', 'five', 'seven', 'six']);
  });

  it('stops at the first failure that would repeat for every batch (a refused key), without leaking the upstream body or the key', async () => {
    const file = corpus('refused.jsonl', Array.from({ length: 6 }, (_, index) => line(`r${index}`, `refused ${index}`)));
    const run = await tollgate(['embed', '--file', file, '--out', join(work, 'refused.out.jsonl'), '--batch-size', '1', '--concurrency', '1'], {
      OPENAI_API_KEY: 'sk-wrong-key-0000',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/tollgate: stopped early: provider_authentication: /);
    expect(embeddingCalls()).toHaveLength(1);
    expectNoLeak(run, [UPSTREAM_MARKER, 'sk-wrong-key-0000']);
  });

  it('draws a progress bar on a terminal instead of plain lines (run under a pseudo-terminal with script(1))', async () => {
    const hasScript = spawnSync('script', ['--version']).status === 0;
    if (!hasScript) {
      console.warn('progress bar test skipped: script(1) from util-linux is not installed');
      return;
    }
    const file = corpus('tty.jsonl', [line('t1', 'terminal one'), '{"id":', line('t2', 'terminal two')]);
    const command = [process.execPath, CLI, 'embed', '--file', file, '--out', join(work, 'tty.out.jsonl')].map((part) => `'${part}'`).join(' ');
    // Asynchronous: the emulator answers from this process.
    const run = await new Promise<{ status: number | null; stdout: string }>((resolvePromise, reject) => {
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        cwd: work,
        env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY, OPENAI_URL: openai.url, OPENAI_EMBEDDING_MODEL: 'embed-test', TOLLGATE_CONFIG: join(work, 'tollgate.yaml'), TERM: 'xterm' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('error', reject);
      child.on('close', (status) => {
        clearTimeout(timer);
        resolvePromise({ status, stdout });
      });
    });
    const screen = run.stdout;
    expect(screen).toMatch(/embedding \[[^\]]*\] 100% \| 3\/3 lines \| embedded 2 \| already stored 0 \| bad 1 \| failed 0/);
    expect(screen).toContain('tollgate: tty.jsonl:2: not valid JSON (skipped)');
    expect(screen).not.toContain('progress: ');
    expect(run.status).toBe(1);
  });

  it.each([
    ['no destination', ['--file', 'x.jsonl'], 'tollgate: embed --file: give exactly one of --into-vector-store or --out FILE\n'],
    ['two destinations', ['--file', 'x.jsonl', '--out', 'o.jsonl', '--into-vector-store'], 'tollgate: embed --file: give exactly one of --into-vector-store or --out FILE\n'],
    ['TEXT and --file', ['hello', '--file', 'x.jsonl', '--out', 'o.jsonl'], 'tollgate: embed: give TEXT or --file, not both\n'],
    ['--out without --file', ['hello', '--out', 'o.jsonl'], 'tollgate: embed: --out needs --file\n'],
    ['a missing corpus', ['--file', 'missing.jsonl', '--out', 'o.jsonl'], 'tollgate: --file: cannot read missing.jsonl\n'],
    ['a batch over ai.max_batch_inputs', ['--file', 'x.jsonl', '--out', 'o.jsonl', '--batch-size', '33'], 'tollgate: --batch-size must be at most ai.max_batch_inputs (32), got 33\n'],
    ['a zero batch size', ['--file', 'x.jsonl', '--out', 'o.jsonl', '--batch-size', '0'], 'tollgate: --batch-size must be a positive integer (got "0")\n'],
    ['too much concurrency', ['--file', 'x.jsonl', '--out', 'o.jsonl', '--concurrency', '65'], 'tollgate: --concurrency must be at most 64 (got 65)\n'],
  ])('exit 2 for %s', async (_, args, message) => {
    corpus('x.jsonl', [line('x', 'x')]);
    const run = await tollgate(['embed', ...args]);
    expect(run.stderr).toBe(message);
    expect(run.status).toBe(2);
    expect(embeddingCalls()).toHaveLength(0);
  });

  it('exit 2 when --out holds lines it did not write', async () => {
    const file = corpus('y.jsonl', [line('y', 'y')]);
    writeFileSync(join(work, 'foreign.jsonl'), 'hello\n');
    const run = await tollgate(['embed', '--file', file, '--out', 'foreign.jsonl']);
    expect(run.stderr).toBe('tollgate: foreign.jsonl:1: not an embedding record written by tollgate embed; give another --out file\n');
    expect(run.status).toBe(2);
  });
});

describe('tollgate embed --file --into-vector-store', () => {
  jest.setTimeout(240_000);

  it('refuses a table that was never installed before any provider call', async () => {
    const file = corpus('v0.jsonl', [line('v', 'v')]);
    const run = await tollgate(['embed', '--file', file, '--into-vector-store', '--table', 'never_installed']);
    expect(run.stderr).toBe('tollgate: table never_installed does not exist; run install first (tollgate vector install)\n');
    expect(run.status).toBe(1);
    expect(embeddingCalls()).toHaveLength(0);
  });

  it('upserts text and metadata, searches find them, and a re-run skips the ids stored for this provider and model', async () => {
    expect((await tollgate(['vector', 'install', '--dimensions', '4', '--table', 'corpus'])).status).toBe(0);
    const lines = ['red apple', 'green pear', 'yellow banana', 'blue berry', 'purple plum'].map((text, index) =>
      line(`fruit-${index}`, text, { index }),
    );
    const file = corpus('fruit.jsonl', lines);
    const run = await tollgate(['embed', '--file', file, '--into-vector-store', '--table', 'corpus', '--batch-size', '2', '--concurrency', '3']);
    expect(run.stdout).toMatch(/^5 lines: embedded 5, already stored 0, bad 0, failed 0 with openai\/embed-test \(4 dimensions\) into vector store table corpus in /);
    expect(run.status).toBe(0);

    const search = await tollgate(['vector', 'search', '--table', 'corpus', '--embed', 'yellow banana', '--limit', '1', '--format', 'json']);
    expect(JSON.parse(search.stdout).matches[0]).toMatchObject({ id: 'fruit-2', content: 'yellow banana', metadata: { index: 2 }, score: 1 });

    openai.server.reset();
    writeFileSync(file, `${[...lines, line('fruit-5', 'orange orange')].join('\n')}\n`);
    const again = await tollgate(['embed', '--file', file, '--into-vector-store', '--table', 'corpus']);
    expect(again.stdout).toMatch(/^6 lines: embedded 1, already stored 5, bad 0, failed 0 /);
    expect(again.status).toBe(0);
    expect(inputsSent()).toEqual([['orange orange']]);

    // Another model is another vector space: nothing counts as stored for it.
    openai.server.reset();
    const other = await tollgate(['embed', '--file', file, '--into-vector-store', '--table', 'corpus', '--model', 'embed-test-2']);
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/tollgate: stopped early: model_not_available: /);
    expect(inputsSent()).toHaveLength(1);
  });
});
