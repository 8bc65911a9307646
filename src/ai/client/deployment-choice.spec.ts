import { ConnectionError, NoHealthyDeploymentError } from '../errors';
import { Deployment, DeploymentChooser, DeploymentGroup, type DeploymentStrategy, NEAR_LIMIT } from './deployment-choice';
import { DeploymentHealth } from './deployment-health';

const policy = { failures: 1, window: 10, cooldownMs: 10_000, honourRetryAfter: true };

function setUp(strategy: DeploymentStrategy, settings: Array<{ weight?: number; rpm?: number; tpm?: number }>, random = () => 0.5, waitMs = 0) {
  const deployments = settings.map((each, index) => new Deployment({ provider: `p${index}`, model: 'm', weight: each.weight ?? 1, rpm: each.rpm, tpm: each.tpm }));
  const group = new DeploymentGroup('chat', strategy, deployments);
  const time = { now: 1_000_000 };
  const waits: number[] = [];
  const health = new DeploymentHealth(policy, deployments.map((d) => d.key), undefined, () => time.now);
  const chooser = new DeploymentChooser(health, waitMs, {
    random,
    now: () => time.now,
    sleep: async (ms) => {
      waits.push(ms);
      time.now += ms;
    },
  });
  const keys = async () => (await chooser.choose(group)).map((deployment) => deployment.key);
  return { deployments, group, chooser, health, time, keys, waits };
}

describe('DeploymentChooser.choose', () => {
  it('ordered: configured order', async () => {
    await expect(setUp('ordered', [{}, {}, {}]).keys()).resolves.toEqual(['p0/m', 'p1/m', 'p2/m']);
  });

  it('weighted: the pick by weight first, the others in configured order', async () => {
    // Weights 1, 2, 1 over [0, 4): 0.5 * 4 = 2 falls in p1's share, 3.5 in p2's.
    await expect(setUp('weighted', [{ weight: 1 }, { weight: 2 }, { weight: 1 }], () => 0.5).keys()).resolves.toEqual(['p1/m', 'p0/m', 'p2/m']);
    await expect(setUp('weighted', [{ weight: 1 }, { weight: 2 }, { weight: 1 }], () => 0.9).keys()).resolves.toEqual(['p2/m', 'p0/m', 'p1/m']);
    await expect(setUp('weighted', [{ weight: 1 }, { weight: 2 }, { weight: 1 }], () => 0).keys()).resolves.toEqual(['p0/m', 'p1/m', 'p2/m']);
  });

  it('least-busy: the fewest in flight, the first on a tie', async () => {
    const { deployments, keys } = setUp('least-busy', [{}, {}, {}]);
    deployments[0].inFlight = 2;
    deployments[1].inFlight = 1;
    deployments[2].inFlight = 1;
    await expect(keys()).resolves.toEqual(['p1/m', 'p0/m', 'p2/m']);
  });

  it('lowest-latency: an unmeasured deployment first, then the lowest average', async () => {
    const { deployments, keys } = setUp('lowest-latency', [{}, {}]);
    deployments[0].observeLatency(100);
    await expect(keys()).resolves.toEqual(['p1/m', 'p0/m']);
    deployments[1].observeLatency(300);
    await expect(keys()).resolves.toEqual(['p0/m', 'p1/m']);
    // A moving average: one slow answer moves it a fifth of the way.
    deployments[0].observeLatency(1100);
    expect(deployments[0].latencyMs).toBe(300);
  });

  it('a deployment near its RPM or TPM goes last', async () => {
    const { deployments, time, keys } = setUp('ordered', [{ rpm: 10 }, { tpm: 1000 }, {}]);
    for (let call = 0; call < 10 * NEAR_LIMIT; call++) deployments[0].countRequest(time.now);
    deployments[1].countTokens(950, time.now);
    await expect(keys()).resolves.toEqual(['p2/m', 'p0/m', 'p1/m']);
    // A new minute: room again.
    time.now += 60_000;
    await expect(keys()).resolves.toEqual(['p0/m', 'p1/m', 'p2/m']);
  });

  it('skips a cooling deployment; the first call after its cool-down is its probe, in front', async () => {
    const { health, time, keys } = setUp('ordered', [{}, {}]);
    health.failed('p0/m', new ConnectionError('reset'));
    await expect(keys()).resolves.toEqual(['p1/m']);
    time.now += 10_000;
    await expect(keys()).resolves.toEqual(['p0/m', 'p1/m']);
    // The probe is out: other calls stay off it.
    await expect(keys()).resolves.toEqual(['p1/m']);
  });

  it('every deployment cooling: no_healthy_deployment with the time to the first, or a wait when allowed', async () => {
    const { health, keys } = setUp('weighted', [{}, {}]);
    health.failed('p0/m', new ConnectionError('reset'));
    health.failed('p1/m', new ConnectionError('reset'));
    const refused = await keys().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NoHealthyDeploymentError);
    expect(refused).toMatchObject({ retryAfterMs: 10_000, message: "every deployment of 'chat' is cooling down after failures; the first takes traffic again in 10 s" });

    const waiting = setUp('ordered', [{}], () => 0.5, 10_000);
    waiting.health.failed('p0/m', new ConnectionError('reset'));
    await expect(waiting.keys()).resolves.toEqual(['p0/m']);
    expect(waiting.waits).toEqual([10_000]);
  });
});

describe('DeploymentChooser.track', () => {
  it('counts a call in flight while it runs, and tells the breaker its outcome', async () => {
    const { deployments, chooser, health } = setUp('ordered', [{}]);
    let release!: () => void;
    const running = chooser.track(deployments[0], () => new Promise<string>((resolve) => (release = () => resolve('ok'))), 'generate');
    expect(deployments[0].inFlight).toBe(1);
    release();
    await expect(running).resolves.toBe('ok');
    expect(deployments[0].inFlight).toBe(0);
    expect(deployments[0].latencyMs).toBeGreaterThanOrEqual(0);
    await chooser.track(deployments[0], async () => 'stream', 'streaming');
    expect(deployments[0].inFlight).toBe(1);
    chooser.release(deployments[0]);
    await expect(chooser.track(deployments[0], () => Promise.reject(new ConnectionError('reset')), 'generate')).rejects.toThrow('reset');
    expect(deployments[0].inFlight).toBe(0);
    expect(health.status('p0/m').state).toBe('cooling');
    expect(chooser.cooling(deployments[0])).toBe(true);
  });

  it("an aborted try counts for nothing: the probe's goes back, an older try's leaves the probe out", async () => {
    const { deployments, chooser, health, time, keys } = setUp('ordered', [{}, {}]);
    const caller = new AbortController();
    let cut!: () => void;
    // A try that started before the deployment cooled down, still in flight when its probe goes out.
    const older = chooser.track(deployments[0], () => new Promise<string>((_resolve, reject) => (cut = () => reject(new Error('client disconnected')))), 'generate', caller.signal);
    health.failed('p0/m', new ConnectionError('reset'));
    time.now += 10_000;
    await expect(keys()).resolves.toEqual(['p0/m', 'p1/m']);
    expect(health.status('p0/m').state).toBe('probing');
    caller.abort();
    cut();
    await expect(older).rejects.toThrow('client disconnected');
    expect(health.status('p0/m')).toMatchObject({ state: 'probing', recentFailures: 0 });
    // The probe's own caller leaves: no answer, no failure, and the next call probes again.
    const prober = new AbortController();
    prober.abort();
    await expect(chooser.track(deployments[0], () => Promise.reject(new Error('client disconnected')), 'generate', prober.signal)).rejects.toThrow();
    expect(health.status('p0/m').state).not.toBe('probing');
    expect(health.coolingUntil('p0/m')).toBeGreaterThan(0);
    await expect(keys()).resolves.toEqual(['p0/m', 'p1/m']);
    expect(health.status('p0/m').state).toBe('probing');
  });
});
