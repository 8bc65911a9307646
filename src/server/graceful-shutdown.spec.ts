import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { installGracefulShutdown } from './graceful-shutdown';

/** The few parts of the Nest app the shutdown touches; the drain itself is covered by test/graceful-shutdown.e2e-spec.ts. */
function fakeApp(options: { drain?: () => Promise<void>; close?: () => Promise<void> }) {
  const calls: string[] = [];
  const app = {
    getHttpServer: () => ({ closeAllConnections: () => calls.push('cut') }),
    getHttpAdapter: () => ({ getInstance: () => ({ addHook: () => undefined, close: async () => (calls.push('drain'), options.drain?.()) }) }),
    close: async (signal: string) => (calls.push(`hooks ${signal}`), options.close?.()),
  };
  return { app: app as unknown as NestFastifyApplication, calls };
}

function shutdownOutcome(app: NestFastifyApplication, timeoutMs: number, hooksTimeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    installGracefulShutdown(app, { timeoutMs, hooksTimeoutMs, signals: ['SIGUSR2'], exit: resolve });
    process.emit('SIGUSR2', 'SIGUSR2');
  });
}

describe('installGracefulShutdown', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn']));

  it('drains, then runs the hooks with the signal, and exits 0', async () => {
    const { app, calls } = fakeApp({});
    expect(await shutdownOutcome(app, 1000, 1000)).toBe(0);
    expect(calls).toEqual(['drain', 'hooks SIGUSR2']);
  });

  it('cuts the connections at the deadline and exits 1', async () => {
    let finishDrain = () => undefined as void;
    const { app, calls } = fakeApp({ drain: () => new Promise<void>((resolve) => (finishDrain = resolve)) });
    const outcome = shutdownOutcome(app, 30, 1000);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(calls).toEqual(['drain', 'cut']);
    finishDrain();
    expect(await outcome).toBe(1);
    expect(calls).toEqual(['drain', 'cut', 'hooks SIGUSR2']);
  });

  it('exits 1 when a hook fails, and when one never settles', async () => {
    const failing = fakeApp({ close: () => Promise.reject(new Error('store refused')) });
    expect(await shutdownOutcome(failing.app, 1000, 1000)).toBe(1);
    const hanging = fakeApp({ close: () => new Promise<void>(() => undefined) });
    const started = Date.now();
    expect(await shutdownOutcome(hanging.app, 20, 30)).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
