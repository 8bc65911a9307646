/**
 * `tollgate generate --stream` as a subprocess (node dist/src/cli.js) against loopback emulators: tokens on
 * stdout as they arrive, JSON events per line, and errors before and after the first token.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OpenAiEmulator, UPSTREAM_MARKER } from './emulators/openai-emulator';
import { buildDistIfStale, expectNoLeak, runCli } from './support/cli-run';
import { OpenAiPair } from './support/openai-pair';

const KEY = 'sk-cli-stream-KEY-3390';
const SECRETS = [KEY, UPSTREAM_MARKER];

let work: string;
let pair: OpenAiPair;
let openai: OpenAiEmulator;
let backup: OpenAiEmulator;

const tollgate = (args: string[]) => runCli(args, { cwd: work, env: pair.env() });

beforeAll(async () => {
  buildDistIfStale();
  work = mkdtempSync(join(tmpdir(), 'tollgate-stream-cli-'));
  pair = await OpenAiPair.start(KEY);
  ({ openai, deepseek: backup } = pair);
}, 120_000);

afterAll(async () => {
  await pair.close();
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => pair.reset());

describe('tollgate generate --stream', () => {
  it('prints the tokens as they arrive, and the same text as without --stream', async () => {
    openai.server.inject({ kind: 'stream', chunkDelayMs: 250 });
    const streamed = await tollgate(['generate', 'one two three', '--stream', '--system-prompt', '']);
    expect(streamed.status).toBe(0);
    expect(streamed.stderr).toBe('');
    const whole = await tollgate(['generate', 'one two three', '--system-prompt', '']);
    expect(streamed.stdout).toBe(whole.stdout);
    expect(streamed.stdout.endsWith('\n')).toBe(true);
    // Several writes, the first long before the end: the emulator paces its chunks 250 ms apart.
    expect(streamed.stdoutAt.length).toBeGreaterThan(2);
    expect(streamed.exitAt - streamed.stdoutAt[0]).toBeGreaterThan(500);
    expect((openai.server.requests[0].body as { stream: boolean }).stream).toBe(true);
  });

  it('--format json prints one event per line: deltas, then done in snake_case', async () => {
    const run = await tollgate(['generate', 'hello there', '--stream', '--format', 'json']);
    expect(run.status).toBe(0);
    const events = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const deltas = events.slice(0, -1);
    expect(deltas.length).toBeGreaterThan(1);
    for (const delta of deltas) expect(delta).toEqual({ type: 'delta', text: expect.any(String) });
    expect(deltas.map((d) => d.text).join('')).toMatch(/^echo: .*hello there/s);
    expect(events.at(-1)).toEqual({
      type: 'done',
      provider: 'openai',
      model: 'gpt-test',
      finish_reason: 'stop',
      usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 },
    });
  });

  it('falls back before the first token; with --no-fallback the error exits 1 with nothing on stdout', async () => {
    openai.serverErrorNext(503);
    const fallback = await tollgate(['generate', 'hi', '--stream', '--format', 'json']);
    expect(fallback.status).toBe(0);
    expect(JSON.parse(fallback.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'done', provider: 'deepseek' });

    backup.server.reset();
    openai.serverErrorNext(503);
    const strict = await tollgate(['generate', 'hi', '--stream', '--no-fallback']);
    expect(strict.status).toBe(1);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toBe('tollgate: openai: upstream returned 503\n');
    expect(backup.server.requests).toHaveLength(0);
    expectNoLeak(strict, SECRETS);
  });

  it('an upstream failure after the first token ends the line, reports on stderr and exits 1', async () => {
    openai.midStreamErrorNext();
    const run = await tollgate(['generate', 'hi', '--stream']);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('echo: \n');
    expect(run.stderr).toBe('tollgate: openai: upstream reported an error mid-stream\n');
    expect(backup.server.requests).toHaveLength(0);
    expectNoLeak(run, SECRETS);
  });
});
