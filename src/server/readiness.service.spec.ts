import { Logger } from '@nestjs/common';
import { ReadinessService } from './readiness.service';

describe('ReadinessService', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => {
    warn.mockRestore();
    jest.useRealTimers();
  });

  it('is ready with no checks registered', async () => {
    expect(await new ReadinessService().report()).toEqual({ ready: true, checks: {} });
  });

  it('reports each check, and is not ready when one fails', async () => {
    const readiness = new ReadinessService();
    readiness.register('cache', async () => 'pong');
    readiness.register('db', async () => {
      throw Object.assign(new Error('connect ECONNREFUSED postgres://user:pw@db:5432'), { code: 'ECONNREFUSED' });
    });
    expect(await readiness.report()).toEqual({ ready: false, checks: { cache: 'ok', db: 'failing' } });
    // The log names the check and the error code, never the driver's message (it may carry credentials).
    expect(warn).toHaveBeenCalledWith('db is not ready (Error ECONNREFUSED)');
    expect(String(warn.mock.calls)).not.toContain('pw@');
  });

  it('once draining, is not ready and runs no check', async () => {
    const readiness = new ReadinessService();
    const probe = jest.fn(async () => 'pong');
    readiness.register('ai', probe);
    expect(await readiness.report()).toEqual({ ready: true, checks: { ai: 'ok' } });
    readiness.markDraining();
    expect(await readiness.report()).toEqual({ ready: false, checks: { shutdown: 'draining' } });
    expect(probe).toHaveBeenCalledTimes(1);
  });

  it('counts a check that does not answer within 2 s as failing', async () => {
    jest.useFakeTimers();
    const readiness = new ReadinessService();
    readiness.register('slow', () => new Promise(() => undefined));
    const pending = readiness.report();
    await jest.advanceTimersByTimeAsync(2000);
    expect(await pending).toEqual({ ready: false, checks: { slow: 'failing' } });
    expect(warn).toHaveBeenCalledWith('slow is not ready (Error no answer within 2000 ms)');
  });
});
