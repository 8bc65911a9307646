/**
 * One model served by several deployments (issue 30, docs/decisions.md B18): AiClient with real adapters in front
 * of OpenAI emulators, one per deployment. Strategies split and place calls as configured; a deployment failing
 * 3 of its last 10 calls cools down, its emulator sees no call until the probe, and it takes traffic after it.
 */
import { AiClient } from '../src/ai/client/ai-client';
import type { AiClientOptions } from '../src/ai/client/ai-client.options';
import type { DeploymentStrategy } from '../src/ai/client/deployment-choice';
import { ProviderRegistry } from '../src/ai/client/provider-registry';
import { NoHealthyDeploymentError } from '../src/ai/errors';
import { ModelNotAllowedError } from '../src/governance/governance-errors';
import { DEFAULT_PROMPT_TEMPLATES } from '../src/ai/prompts/prompt-templates';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { collect } from './support/provider-specs';

const KEY = 'sk-deployments';
const CHAT = '/v1/chat/completions';
let east: OpenAiEmulator;
let west: OpenAiEmulator;

beforeAll(async () => {
  [east, west] = await Promise.all([OpenAiEmulator.start({ apiKey: KEY }), OpenAiEmulator.start({ apiKey: KEY })]);
});
afterAll(async () => {
  await Promise.all([east.close(), west.close()]);
});
beforeEach(() => [east, west].forEach((emulator) => emulator.server.reset()));

const clients: AiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function client(strategy: DeploymentStrategy, deployments: Array<string | { target: string; weight?: number; rpm?: number }>, overrides: Partial<AiClientOptions> = {}): AiClient {
  const made = new AiClient(
    ProviderRegistry.fromSettings([
      { name: 'east', kind: 'openai', url: east.url, apiKey: KEY, chatModel: 'gpt-test', timeoutMs: 5000 },
      { name: 'west', kind: 'openai', url: west.url, apiKey: KEY, chatModel: 'gpt-test', timeoutMs: 5000 },
      // East again, with a key it refuses: a deployment whose credential has expired.
      { name: 'stale', kind: 'openai', url: east.url, apiKey: 'sk-expired', chatModel: 'gpt-test', timeoutMs: 5000 },
      // East again, with a timeout short enough for a test to meet.
      { name: 'hasty', kind: 'openai', url: east.url, apiKey: KEY, chatModel: 'gpt-test', timeoutMs: 300 },
    ]),
    {
      defaultProvider: 'east',
      retry: { retries: 0, baseDelayMs: 10 },
      fallback: { enabled: true },
      modelAliases: { chat: { strategy, deployments } },
      prompts: { ...DEFAULT_PROMPT_TEMPLATES, providers: {} },
      context: { excludedFields: [], sensitiveKeys: [] },
      sensitiveKeys: [],
      limits: { maxBatchInputs: 4 },
      healthCacheMs: 5000,
      ...overrides,
    },
  );
  clients.push(made);
  return made;
}

const ask = (made: AiClient, text = 'hi') => made.generateMessages([{ role: 'user', content: text }], { model: 'chat' });

describe('strategies', () => {
  it('weighted: 1,000 calls split within 5 points of the weights (3:1)', async () => {
    const made = client('weighted', [{ target: 'east/gpt-test', weight: 3 }, { target: 'west/gpt-test', weight: 1 }]);
    const answeredBy = { east: 0, west: 0 };
    for (let batch = 0; batch < 50; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => ask(made)));
      for (const answer of answers) answeredBy[answer.provider as 'east' | 'west']++;
    }
    expect(answeredBy.east + answeredBy.west).toBe(1000);
    expect(east.server.requestsTo(CHAT)).toHaveLength(answeredBy.east);
    expect(Math.abs(answeredBy.east / 1000 - 0.75)).toBeLessThanOrEqual(0.05);
    expect(Math.abs(answeredBy.west / 1000 - 0.25)).toBeLessThanOrEqual(0.05);
  }, 120_000);

  it('least-busy: while one deployment holds a call, the next goes to the idle one', async () => {
    const made = client('least-busy', ['east/gpt-test', 'west/gpt-test']);
    east.server.delayNext(800, 1, CHAT);
    const slow = ask(made, 'slow');
    // The first call is on its way to east (both idle: the first configured).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((made.deploymentStatus().find((d) => d.deployment === 'east/gpt-test') ?? { inFlight: 0 }).inFlight).toBe(1);
    const quick = await ask(made, 'quick');
    expect(quick.provider).toBe('west');
    expect((await slow).provider).toBe('east');
    // Both idle again: back to the first configured.
    expect((await ask(made)).provider).toBe('east');
    expect(east.server.requestsTo(CHAT)).toHaveLength(2);
    expect(west.server.requestsTo(CHAT)).toHaveLength(1);
  });

  it('lowest-latency: after each is measured, calls go to the faster deployment', async () => {
    const made = client('lowest-latency', ['east/gpt-test', 'west/gpt-test']);
    east.server.delayNext(300, 1, CHAT);
    expect((await ask(made)).provider).toBe('east');
    expect((await ask(made)).provider).toBe('west');
    const next = await Promise.all([ask(made), ask(made), ask(made)]);
    expect(next.map((answer) => answer.provider)).toEqual(['west', 'west', 'west']);
    expect(made.deploymentStatus().find((d) => d.deployment === 'east/gpt-test')!.latencyMs).toBeGreaterThanOrEqual(300);
  });

  it('a deployment at 90 % of its known RPM is passed over before it answers 429', async () => {
    const made = client('ordered', [{ target: 'east/gpt-test', rpm: 10 }, 'west/gpt-test']);
    const providers: string[] = [];
    for (let call = 0; call < 12; call++) providers.push((await ask(made)).provider);
    expect(providers.slice(0, 9)).toEqual(Array(9).fill('east'));
    expect(providers.slice(9)).toEqual(['west', 'west', 'west']);
  });
});

describe('cool-down', () => {
  const cooldown = (cooldownMs: number) => ({ deployments: { cooldown: { failures: 3, window: 10, cooldownMs, honourRetryAfter: true }, waitMs: 0 } });

  it('3 failures of the last 10 calls: no call reaches the deployment until the probe, which brings it back', async () => {
    const made = client('ordered', ['east/gpt-test', 'west/gpt-test'], cooldown(1500));
    // Calls 1-7: east answers four and fails three (5xx), each failure falling back to west.
    for (let call = 0; call < 4; call++) expect((await ask(made)).provider).toBe('east');
    east.serverErrorNext(503, 3);
    for (let call = 0; call < 3; call++) expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(7);
    expect(made.deploymentStatus()[0]).toMatchObject({ deployment: 'east/gpt-test', state: 'cooling', retryAfterSeconds: 2 });
    // Cooling down: every call goes straight to west.
    for (let call = 0; call < 5; call++) expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(7);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    // One probe, which answers: east takes traffic again.
    expect((await ask(made)).provider).toBe('east');
    expect(made.deploymentStatus()[0]).toMatchObject({ state: 'healthy', recentFailures: 0 });
    expect((await ask(made)).provider).toBe('east');
    expect(east.server.requestsTo(CHAT)).toHaveLength(9);
  });

  it("a non-streamed answer that times out is the caller's (its length is): 5 such calls leave the deployment healthy", async () => {
    const made = client('ordered', ['hasty/gpt-test', 'west/gpt-test'], cooldown(60_000));
    east.server.delayNext(1_000, 5, CHAT);
    for (let call = 0; call < 5; call++) expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(5);
    expect(made.deploymentStatus()[0]).toMatchObject({ deployment: 'hasty/gpt-test', state: 'healthy', recentFailures: 0 });
    expect((await ask(made)).provider).toBe('hasty');
  });

  it("a stream whose headers do not come in time is the deployment's: 3 such calls cool it down", async () => {
    const made = client('ordered', ['hasty/gpt-test', 'west/gpt-test'], cooldown(60_000));
    east.server.delayNext(1_000, 3, CHAT);
    for (let call = 0; call < 3; call++) {
      const events = await collect(made.streamMessages([{ role: 'user', content: 'hi' }], { model: 'chat' }));
      expect(events.at(-1)).toMatchObject({ type: 'done', provider: 'west' });
    }
    expect(made.deploymentStatus()[0]).toMatchObject({ deployment: 'hasty/gpt-test', state: 'cooling' });
  });

  it('a refused credential (401) is the deployment failing: the call moves on, and 3 refusals cool it down', async () => {
    const made = client('ordered', ['stale/gpt-test', 'west/gpt-test'], cooldown(60_000));
    for (let call = 0; call < 5; call++) expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(3);
    expect(made.deploymentStatus()[0]).toMatchObject({ deployment: 'stale/gpt-test', state: 'cooling' });
  });

  it('a failed probe cools the deployment down again', async () => {
    const made = client('ordered', ['east/gpt-test', 'west/gpt-test'], cooldown(300));
    east.serverErrorNext(500, 4);
    for (let call = 0; call < 3; call++) await ask(made);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(4);
    expect(made.deploymentStatus()[0].state).toBe('cooling');
    expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(4);
  });

  it('a 429 with Retry-After cools the deployment down at once, without retrying it', async () => {
    const made = client('ordered', ['east/gpt-test', 'west/gpt-test'], { ...cooldown(30_000), retry: { retries: 3, baseDelayMs: 10 } });
    east.rateLimitNext('2');
    expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(1);
    expect(made.deploymentStatus()[0]).toMatchObject({ state: 'cooling', retryAfterSeconds: 2 });
  });

  it('every deployment cooling down: refused at once with no_healthy_deployment and the time to the first', async () => {
    const made = client('weighted', ['east/gpt-test'], cooldown(5000));
    east.serverErrorNext(502, 3);
    for (let call = 0; call < 3; call++) await expect(ask(made)).rejects.toMatchObject({ type: 'provider_error' });
    const refused = await ask(made).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NoHealthyDeploymentError);
    expect(refused).toMatchObject({ type: 'no_healthy_deployment', message: expect.stringContaining("every deployment of 'chat' is cooling down") });
    expect((refused as NoHealthyDeploymentError).retryAfterMs).toBeGreaterThan(4000);
    expect(east.server.requestsTo(CHAT)).toHaveLength(3);
  });

  it("the strategy picks among the deployments the caller's allow-lists admit: 20 weighted calls of a caller allowed one all go to it", async () => {
    const made = client('weighted', ['east/gpt-test', 'west/gpt-test']);
    let allowed = ['west/gpt-test'];
    const check = (provider: string, model: string) => allowed.includes(`${provider}/${model}`);
    made.setModelCallGate({
      open: (call) => {
        if (!check(call.provider, call.model)) throw new ModelNotAllowedError(`${call.provider}/${call.model}`);
        return undefined;
      },
      admits: check,
    });
    for (let call = 0; call < 20; call++) expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(0);
    // A caller allowed none of them is refused, naming the deployment picked, before any upstream call.
    allowed = [];
    await expect(ask(made)).rejects.toBeInstanceOf(ModelNotAllowedError);
    expect(east.server.requestsTo(CHAT).length + west.server.requestsTo(CHAT).length).toBe(20);
  });

  it('a probe claimed by a call the gate then refuses is given back: the next call probes the deployment', async () => {
    const made = client('ordered', ['east/gpt-test', 'west/gpt-test'], cooldown(300));
    let refusing = false;
    made.setModelCallGate({
      open: () => {
        if (refusing) throw new ModelNotAllowedError('east/gpt-test');
        return undefined;
      },
      admits: () => true,
    });
    east.serverErrorNext(503, 3);
    for (let call = 0; call < 3; call++) expect((await ask(made)).provider).toBe('west');
    await new Promise((resolve) => setTimeout(resolve, 350));
    // This caller's call claims east's probe, then its gate refuses it before anything is sent.
    refusing = true;
    await expect(ask(made)).rejects.toBeInstanceOf(ModelNotAllowedError);
    refusing = false;
    expect(made.deploymentStatus()[0].state).not.toBe('probing');
    expect((await ask(made)).provider).toBe('east');
    expect(east.server.requestsTo(CHAT)).toHaveLength(4);
  });

  it('a probe the caller aborts says nothing of the deployment: the next call probes it again', async () => {
    const made = client('ordered', ['east/gpt-test', 'west/gpt-test'], cooldown(300));
    east.serverErrorNext(503, 3);
    for (let call = 0; call < 3; call++) expect((await ask(made)).provider).toBe('west');
    await new Promise((resolve) => setTimeout(resolve, 350));
    // The probe hangs upstream and its caller gives up; then east fails the next probe.
    east.server.delayNext(2000, 1, CHAT);
    east.serverErrorNext(503, 2);
    const caller = new AbortController();
    setTimeout(() => caller.abort(new Error('client disconnected')), 100);
    await expect(made.generateMessages([{ role: 'user', content: 'hi' }], { model: 'chat', signal: caller.signal })).rejects.toThrow();
    // A probe again (not a closed breaker counting 1 of 3): its failure cools east down at once.
    expect((await ask(made)).provider).toBe('west');
    expect(made.deploymentStatus()[0].state).toBe('cooling');
    expect((await ask(made)).provider).toBe('west');
    expect(east.server.requestsTo(CHAT)).toHaveLength(5);
  });

  it('or waits for the first to come back when the operator allows it', async () => {
    const made = client('ordered', ['east/gpt-test'], { deployments: { cooldown: { failures: 3, window: 10, cooldownMs: 400, honourRetryAfter: true }, waitMs: 1000 } });
    east.serverErrorNext(503, 3);
    for (let call = 0; call < 3; call++) await expect(ask(made)).rejects.toMatchObject({ type: 'provider_error' });
    const started = Date.now();
    expect((await ask(made)).provider).toBe('east');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});
