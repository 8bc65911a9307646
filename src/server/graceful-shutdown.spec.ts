import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { installGracefulShutdown } from './graceful-shutdown';

/** The few parts of the Nest app the shutdown touches; the drain itself is covered by test/graceful-shutdown.e2e-spec.ts. */
function fakeApp(options: { drain?: () => Promise<void>; close?: () => Promise<void> }) {
  const calls: string[] = [];
  const readiness = { markDraining: () => calls.push('not ready') };
  const app = {
    get: () => readiness,
    getHttpServer: () => ({ on: () => undefined, closeAllConnections: () => calls.push('cut'), closeIdleConnections: () => undefined }),
    getHttpAdapter: () => ({ getInstance: () => ({ addHook: () => undefined, close: async () => (calls.push('drain'), options.drain?.()) }) }),
    close: async (signal: string) => (calls.push(`hooks ${signal}`), options.close?.()),
  };
  return { app: app as unknown as NestFastifyApplication, calls };
}

function shutdownOutcome(app: NestFastifyApplication, timeoutMs: number, hooksTimeoutMs: number, signal: NodeJS.Signals = 'SIGUSR2', graceMs = 0): Promise<number> {
  return new Promise((resolve) => {
    installGracefulShutdown(app, { timeoutMs, hooksTimeoutMs, graceMs, signals: [signal], exit: resolve });
    process.emit(signal, signal);
  });
}

describe('installGracefulShutdown', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn']));

  it('drains, then runs the hooks with the signal, and exits 0', async () => {
    const { app, calls } = fakeApp({});
    expect(await shutdownOutcome(app, 1000, 1000)).toBe(0);
    expect(calls).toEqual(['not ready', 'drain', 'hooks SIGUSR2']);
  });

  it('on SIGTERM reports not ready, keeps serving for the grace, then drains; other signals drain at once', async () => {
    const { app, calls } = fakeApp({});
    const started = Date.now();
    const outcome = shutdownOutcome(app, 1000, 1000, 'SIGTERM', 150);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toEqual(['not ready']);
    expect(await outcome).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(calls).toEqual(['not ready', 'drain', 'hooks SIGTERM']);

    const interrupted = fakeApp({});
    const at = Date.now();
    expect(await shutdownOutcome(interrupted.app, 1000, 1000, 'SIGUSR2', 5000)).toBe(0);
    expect(Date.now() - at).toBeLessThan(1000);
  });

  it('cuts the connections at the deadline and exits 1', async () => {
    let finishDrain = () => undefined as void;
    const { app, calls } = fakeApp({ drain: () => new Promise<void>((resolve) => (finishDrain = resolve)) });
    const outcome = shutdownOutcome(app, 30, 1000);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(calls).toEqual(['not ready', 'drain', 'cut']);
    finishDrain();
    expect(await outcome).toBe(1);
    expect(calls).toEqual(['not ready', 'drain', 'cut', 'hooks SIGUSR2']);
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
