import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ProviderSettings } from '../../src/ai/providers/ai-provider.interface';

const WORKER = join(__dirname, 'provider-calls-worker.js');

export type CallOutcome = { text: string; model: string } | { error: string; message: string };

/**
 * `calls` generate calls of the built adapter (dist/, so `npm run build` first) in a node process whose whole
 * environment is PATH, HOME and `env`; resolves with each call's outcome.
 */
export async function callsInProcess(settings: ProviderSettings, calls: number, env: NodeJS.ProcessEnv = {}): Promise<CallOutcome[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [WORKER, JSON.stringify(settings), String(calls)], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    timeout: 20_000,
  });
  return stdout.trim().split('\n').map((line) => JSON.parse(line) as CallOutcome);
}
