/**
 * `tollgate generate --stream` as a subprocess (node dist/src/cli.js) against loopback emulators: tokens on
 * stdout as they arrive, JSON events per line, and errors before and after the first token.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { OpenAiEmulator, UPSTREAM_MARKER } from './emulators/openai-emulator';

const ROOT = resolve(__dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'cli.js');
const KEY = 'sk-cli-stream-KEY-3390';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from spawn to each stdout chunk, and to exit. */
  stdoutAt: number[];
  exitAt: number;
}

let work: string;
let openai: OpenAiEmulator;
let backup: OpenAiEmulator;

const env = (): NodeJS.ProcessEnv => ({
  OPENAI_API_KEY: KEY,
  OPENAI_URL: openai.url,
  OPENAI_CHAT_MODEL: 'gpt-test',
  DEEPSEEK_API_KEY: KEY,
  DEEPSEEK_URL: backup.url,
  DEEPSEEK_CHAT_MODEL: 'deepseek-chat',
});

function tollgate(args: string[]): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, ...args], { cwd: work, env: { PATH: process.env.PATH, ...env() }, stdio: ['pipe', 'pipe', 'pipe'] });
    const run: Run = { status: null, stdout: '', stderr: '', stdoutAt: [], exitAt: 0 };
    child.stdout.on('data', (chunk: Buffer) => {
      run.stdout += chunk.toString();
      run.stdoutAt.push(Date.now() - started);
    });
    child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolvePromise({ ...run, status, exitAt: Date.now() - started });
    });
    child.stdin.end('');
  });
}

function expectNoLeak(run: Run): void {
  for (const text of [run.stdout, run.stderr]) {
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(UPSTREAM_MARKER);
  }
}

beforeAll(async () => {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-stale.js')], { cwd: ROOT, stdio: 'inherit' });
  expect(build.status).toBe(0);
  work = mkdtempSync(join(tmpdir(), 'tollgate-stream-cli-'));
  [openai, backup] = await Promise.all([
    OpenAiEmulator.start({ apiKey: KEY }),
    OpenAiEmulator.start({ flavour: 'deepseek', apiKey: KEY, chatModels: ['deepseek-chat'] }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([openai.close(), backup.close()]);
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  openai.server.reset();
  backup.server.reset();
});

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
    expectNoLeak(strict);
  });

  it('an upstream failure after the first token ends the line, reports on stderr and exits 1', async () => {
    openai.midStreamErrorNext();
    const run = await tollgate(['generate', 'hi', '--stream']);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('echo: \n');
    expect(run.stderr).toBe('tollgate: openai: upstream reported an error mid-stream\n');
    expect(backup.server.requests).toHaveLength(0);
    expectNoLeak(run);
  });
});
