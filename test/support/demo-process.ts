/** `npm run demo` (node dist/src/demo/main.js) as a subprocess on a free port, for the specs that talk to it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { buildDistIfStale, ROOT } from './cli-run';

const DEMO = join(ROOT, 'dist', 'src', 'demo', 'main.js');

export interface DemoProcess {
  origin: string;
  /** What the demo printed before it was ready (its instructions). */
  output: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts the demo and resolves once it printed its instructions. `env` adds to a bare PATH-only environment. */
export async function startDemo(env: NodeJS.ProcessEnv = {}): Promise<DemoProcess> {
  buildDistIfStale();
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [DEMO], {
    env: { PATH: process.env.PATH, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the demo did not print its instructions:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // The instructions' last line (the start-up log has the same words inside a JSON line).
      if (/^API docs: http/m.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the demo exited with ${code}:\n${output}`)));
  });
  return {
    origin: `http://127.0.0.1:${port}`,
    output,
    stop: () =>
      child.exitCode !== null
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
  };
}
