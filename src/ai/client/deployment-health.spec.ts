import { AuthenticationError, ConnectionError, ProviderError, RateLimitError, TimeoutError } from '../errors';
import { DeploymentHealth, isCallerShapedTimeout, type SharedCooldowns } from './deployment-health';

const policy = { failures: 3, window: 10, cooldownMs: 30_000, honourRetryAfter: true };

function clock(start = 1_000_000) {
  const time = { now: start };
  return { time, now: () => time.now };
}

describe('DeploymentHealth', () => {
  it('cools a deployment down at 3 failures among its last 10 calls, not before', () => {
    const { time, now } = clock();
    const health = new DeploymentHealth(policy, ['a'], undefined, now);
    health.failed('a', new ConnectionError('reset'));
    for (let call = 0; call < 8; call++) health.succeeded('a');
    health.failed('a', new ProviderError('x', { status: 503 }));
    expect(health.status('a')).toEqual({ state: 'healthy', coolingUntil: 0, recentFailures: 2 });
    // The first failure has left the window of the last 10: still two.
    health.failed('a', new ProviderError('x', { status: 500 }));
    expect(health.status('a').state).toBe('healthy');
    health.failed('a', new ConnectionError('reset'));
    expect(health.status('a')).toEqual({ state: 'cooling', coolingUntil: time.now + 30_000, recentFailures: 0 });
  });

  it('does not count refusals of the request itself (4xx other than 429)', () => {
    const health = new DeploymentHealth(policy, ['a']);
    for (let call = 0; call < 5; call++) health.failed('a', new AuthenticationError('bad key'));
    for (let call = 0; call < 5; call++) health.failed('a', new ProviderError('bad', { status: 400 }));
    expect(health.status('a').state).toBe('healthy');
  });

  it('a 429 with Retry-After cools down at once for that long (at least 1 s); without it, it counts as a failure', () => {
    const { time, now } = clock();
    const health = new DeploymentHealth(policy, ['a', 'b'], undefined, now);
    health.failed('a', new RateLimitError('slow down', { retryAfterMs: 2000 }));
    expect(health.coolingUntil('a')).toBe(time.now + 2000);
    health.failed('b', new RateLimitError('slow down', { retryAfterMs: 0 }));
    expect(health.coolingUntil('b')).toBe(time.now + 1000);
    const ignoring = new DeploymentHealth({ ...policy, honourRetryAfter: false }, ['c'], undefined, now);
    ignoring.failed('c', new RateLimitError('slow down', { retryAfterMs: 2000 }));
    expect(ignoring.status('c')).toMatchObject({ state: 'healthy', recentFailures: 1 });
  });

  it('after the cool-down, one probe: its success closes the breaker, its failure cools down again', async () => {
    const { time, now } = clock();
    const health = new DeploymentHealth(policy, ['a'], undefined, now);
    for (let call = 0; call < 3; call++) health.failed('a', new ConnectionError('reset'));
    time.now += 30_000;
    await expect(health.claimProbe('a')).resolves.toBe(true);
    expect(health.status('a').state).toBe('probing');
    await expect(health.claimProbe('a')).resolves.toBe(false);
    health.failed('a', new ConnectionError('reset'));
    expect(health.status('a')).toMatchObject({ state: 'cooling', coolingUntil: time.now + 30_000 });
    time.now += 30_000;
    await expect(health.claimProbe('a')).resolves.toBe(true);
    health.succeeded('a');
    expect(health.status('a')).toEqual({ state: 'healthy', coolingUntil: 0, recentFailures: 0 });
  });

  it('publishes its cool-downs, follows the others, and takes the probe through the shared store', async () => {
    const published: Array<[string, number]> = [];
    const released: string[] = [];
    let seen: ((key: string, until: number) => void) | undefined;
    let probeFree = false;
    const shared: SharedCooldowns = {
      publish: (key, until) => void published.push([key, until]),
      claimProbe: async () => probeFree,
      releaseProbe: (key) => void released.push(key),
      follow: async (_keys, onSeen) => {
        seen = onSeen;
      },
      close: async () => undefined,
    };
    const { time, now } = clock();
    const health = new DeploymentHealth(policy, ['a'], shared, now);
    await health.loaded;
    health.failed('a', new RateLimitError('slow down', { retryAfterMs: 5000 }));
    expect(published).toEqual([['a', time.now + 5000]]);
    seen!('a', time.now + 9000);
    expect(health.coolingUntil('a')).toBe(time.now + 9000);
    time.now += 9000;
    // Another process holds the probe: this one stays off a moment longer.
    await expect(health.claimProbe('a')).resolves.toBe(false);
    expect(health.status('a').state).toBe('cooling');
    time.now += 1000;
    probeFree = true;
    await expect(health.claimProbe('a')).resolves.toBe(true);
    health.succeeded('a');
    expect(released).toEqual(['a']);
  });
});

describe('isCallerShapedTimeout', () => {
  const timeout = (awaiting?: 'connection' | 'headers' | 'body') => new TimeoutError('timed out', awaiting ? { awaiting } : {});

  it("is a non-streamed answer's wait, and a stream's first chunk after its headers: what the caller's max_tokens, reasoning and prompt stretch", () => {
    expect(isCallerShapedTimeout(timeout('headers'), 'generate')).toBe(true);
    expect(isCallerShapedTimeout(timeout('body'), 'generate')).toBe(true);
    expect(isCallerShapedTimeout(timeout('body'), 'streaming')).toBe(true);
  });

  it("is not a connection's, a stream's headers', an embedding's or the transport's own timeout, nor any other failure", () => {
    expect(isCallerShapedTimeout(timeout('connection'), 'generate')).toBe(false);
    expect(isCallerShapedTimeout(timeout('headers'), 'streaming')).toBe(false);
    expect(isCallerShapedTimeout(timeout('headers'), 'embeddings')).toBe(false);
    expect(isCallerShapedTimeout(timeout(), 'generate')).toBe(false);
    expect(isCallerShapedTimeout(new ProviderError('5xx', { status: 503 }), 'generate')).toBe(false);
  });
});
