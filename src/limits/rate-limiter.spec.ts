import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { MemoryLimitsStorage, UNCOUNTED } from './limits-storage';
import type { LimitsSettings } from './limits-settings';
import { RateLimiter } from './rate-limiter';

describe('RateLimiter headers', () => {
  const settings: LimitsSettings = {
    enabled: true,
    store: { kind: 'memory' },
    tenant: { limit: 5, windowMs: 60_000 },
    token: { limit: 2, windowMs: 10_000 },
    routes: [],
  };
  let storage: MemoryLimitsStorage;
  beforeEach(() => (storage = new MemoryLimitsStorage()));
  afterEach(() => storage.onModuleDestroy());

  function request() {
    const headers: Record<string, string> = {};
    const reply = { header: (name: string, value: string) => (headers[name] = value) };
    const context = new ExecutionContextHost([{ url: '/v1/generate' }, reply, undefined]);
    context.setType('http');
    return { headers, context };
  }

  it('announces the limit with fewer requests left when a request counts against two', async () => {
    const limiter = new RateLimiter(storage, settings);
    const first = request();
    await limiter.consume(first.context, limiter.limitFor('tenant', '/v1/generate')!, 'north');
    expect(first.headers).toEqual({ 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'ratelimit-reset': '60' });
    await limiter.consume(first.context, limiter.limitFor('token', '/v1/generate')!, 'digest');
    expect(first.headers).toEqual({ 'ratelimit-limit': '2', 'ratelimit-remaining': '1', 'ratelimit-reset': '10' });

    const second = request();
    await limiter.consume(second.context, limiter.limitFor('token', '/v1/generate')!, 'digest');
    await limiter.consume(second.context, limiter.limitFor('tenant', '/v1/generate')!, 'north');
    expect(second.headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '0' });

    const third = request();
    await expect(limiter.consume(third.context, limiter.limitFor('token', '/v1/generate')!, 'digest')).rejects.toMatchObject({ status: 429 });
    expect(third.headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '0', 'ratelimit-reset': '10', 'retry-after': '10' });
  });

  it('announces nothing for a request the storage could not count (fail open)', async () => {
    const unreachable: ThrottlerStorage = { increment: async () => UNCOUNTED };
    const limiter = new RateLimiter(unreachable, settings);
    const { headers, context } = request();
    await expect(limiter.consume(context, limiter.limitFor('tenant', '/')!, 'north')).resolves.toBe(true);
    expect(headers).toEqual({});
  });
});
