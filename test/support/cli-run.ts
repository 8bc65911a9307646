import { spawn, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..', '..');
/** The built CLI, run as `node dist/src/cli.js` the way bin/tollgate runs it. */
export const CLI = join(ROOT, 'dist', 'src', 'cli.js');

/**
 * Same guard as `npm start`: (re)builds dist/ (the CLI and the server) when it is missing or stale; a no-op
 * after `npm test`'s pretest.
 */
export function buildDistIfStale(): void {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-stale.js')], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`scripts/build-if-stale.js failed with exit status ${build.status}`, { cause: build.error });
}

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from spawn to each stdout chunk, and to exit: shows whether output streamed or came at the end. */
  stdoutAt: number[];
  exitAt: number;
}

export interface CliRunOptions {
  cwd: string;
  /** The whole environment besides PATH: nothing else is inherited, so no developer key or config leaks in. */
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed: not a terminal, and EOF at once when empty. */
  stdin?: string;
  /** The subprocess is killed (SIGKILL) after this long; 20 s unless given. */
  timeoutMs?: number;
}

/** Runs the CLI asynchronously, so emulators serving from the test process keep answering meanwhile. */
export function runCli(args: string[], options: CliRunOptions): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const run: CliRun = { status: null, stdout: '', stderr: '', stdoutAt: [], exitAt: 0 };
    child.stdout.on('data', (chunk: Buffer) => {
      run.stdout += chunk.toString();
      run.stdoutAt.push(Date.now() - started);
    });
    child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      resolvePromise({ ...run, status, exitAt: Date.now() - started });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** Fails the test when stdout or stderr shows any of the secrets (an API key, an upstream body marker). */
export function expectNoLeak(run: CliRun, secrets: string[]): void {
  for (const text of [run.stdout, run.stderr]) {
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
}
