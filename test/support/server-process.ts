/**
 * The built server (node dist/src/main.js) as a child process on a free port, for suites that need several
 * real processes (sharing a store, or stopped with a signal). Every process started here is remembered, so one
 * call stops them all.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const MAIN = join(resolve(__dirname, '..', '..'), 'dist', 'src', 'main.js');

export interface ServerProcess {
  child: ChildProcess;
  /** Resolves with the `http://host:port` the server logged once it listens; rejects if it exits first. */
  url: Promise<string>;
  /** What the process has written to stdout and stderr so far. */
  output(): string;
}

export class ServerProcesses {
  private readonly children = new Set<ChildProcess>();

  /** Starts `main.js --config configFile --port 0` in `cwd`, with only PATH from the environment. */
  start(configFile: string, cwd: string, startTimeoutMs = 60_000): ServerProcess {
    return this.startNode([MAIN, '--config', configFile, '--port', '0'], cwd, { startTimeoutMs });
  }

  /**
   * Starts `node <args>` in `cwd` (the server with other arguments, or the CLI's `serve`), with PATH and `env`
   * as its whole environment; `maxOpenFiles` runs it under that descriptor limit (bash's `ulimit -n`, then exec).
   */
  startNode(
    args: readonly string[],
    cwd: string,
    options: { env?: NodeJS.ProcessEnv; startTimeoutMs?: number; maxOpenFiles?: number } = {},
  ): ServerProcess {
    const startTimeoutMs = options.startTimeoutMs ?? 60_000;
    const [command, commandArgs] =
      options.maxOpenFiles === undefined
        ? [process.execPath, args]
        : ['bash', ['-c', `ulimit -n ${options.maxOpenFiles} && exec "$@"`, 'bash', process.execPath, ...args]];
    const child = spawn(command, commandArgs, {
      cwd,
      env: { PATH: process.env.PATH, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.add(child);
    child.on('exit', () => this.children.delete(child));
    let output = '';
    const url = new Promise<string>((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), startTimeoutMs);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/[^/\s"]+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolvePromise(match[1]);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code}:\n${output}`));
      });
    });
    return { child, url, output: () => output };
  }

  /** `signal` (SIGTERM: a graceful stop) to every process still running; resolves when all have exited. */
  async stopAll(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await Promise.all(
      [...this.children].map(
        (child) =>
          new Promise((done) => {
            child.once('exit', done);
            child.kill(signal);
          }),
      ),
    );
  }
}
