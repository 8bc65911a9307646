/**
 * A spent budget seen through clients no one here wrote (issue 27): the official `openai` client with its default
 * options and the `ai` SDK throw within a second on a key whose budget is spent, instead of sleeping through a
 * Retry-After of up to a month. An RPM refusal stays retryable, with a Retry-After of at most a minute.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, RetryError, generateText } from 'ai';
import OpenAI from 'openai';
import { OpenAiEmulator } from './emulators/openai-emulator';
import { TestApps } from './support/test-apps';
import { awayFromMinuteEdge } from './support/timing';

const ADMIN_TOKEN = 'admin-token-for-budget-refusal-clients';
const UPSTREAM_KEY = 'sk-emulator-budget-refusal-clients';
/** What the issue asks for; the fix answers in milliseconds, the bug took ~41 minutes (openai) or 6 s (ai). */
const WITHIN_MS = 1_000;
/** Long enough for the base commit's clients to show they wait, short enough that it fails rather than hangs. */
const TEST_MS = 20_000;

let apps: TestApps;
let upstream: OpenAiEmulator;
let origin: string;

beforeAll(async () => {
  upstream = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY });
  apps = new TestApps('tollgate-budget-refusal-clients-', {});
  ({ origin } = await apps.listen(
    [
      'version: 1',
      'api: { token: "api-token-unused-by-budget-refusal-clients" }',
      'ai: { retry_attempts: 0 }',
      'providers:',
      `  openai: { url: "${upstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, timeout: 10 }`,
      `governance: { admin_token: "${ADMIN_TOKEN}" }`,
      '',
    ].join('\n'),
  ));
});

afterAll(async () => {
  await apps.close();
  await upstream.close();
});

async function createKey(settings: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${origin}/v1/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 't-refusals', ...settings }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

/** A key whose daily budget (1 token) no call fits: spent from the start. */
const spentKey = () => createKey({ name: 'spent', budget_tokens: 1, period: 'day' });
const chatCalls = () => upstream.server.requests.filter((request) => request.path.endsWith('/chat/completions')).length;

async function timed<T>(run: () => Promise<T>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, ms: Date.now() - started };
}

describe('a spent budget', () => {
  it(
    'makes the openai client with default options throw at once, with x-should-retry: false and X-Budget-Reset',
    async () => {
      const client = new OpenAI({ apiKey: await spentKey(), baseURL: `${origin}/openai/v1` });
      const before = chatCalls();
      const { error, ms } = await timed(() => client.chat.completions.create({ model: 'openai/gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] }));
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      const refusal = error as InstanceType<typeof OpenAI.RateLimitError>;
      expect(ms).toBeLessThan(WITHIN_MS);
      expect(refusal).toMatchObject({ status: 429, code: 'budget_exceeded', type: 'insufficient_quota' });
      expect(refusal.headers.get('x-should-retry')).toBe('false');
      expect(refusal.headers.get('retry-after')).toBeNull();
      const dayEnd = new Date();
      dayEnd.setUTCHours(24, 0, 0, 0);
      expect(refusal.headers.get('x-budget-reset')).toBe(dayEnd.toISOString());
      expect(chatCalls()).toBe(before);
    },
    TEST_MS,
  );

  it(
    'makes the ai SDK throw within a second, the 429 and its message in hand',
    async () => {
      const model = createOpenAICompatible({ name: 'tollgate', baseURL: `${origin}/openai/v1`, apiKey: await spentKey() })('openai/gpt-test');
      const ask = () => generateText({ model, prompt: 'Hello', maxOutputTokens: 8 });
      // The first call also loads the SDK's lazy parts (~0.4 s on a loaded machine); the second is all refusal.
      await timed(ask);
      const { error, ms } = await timed(ask);
      expect(ms).toBeLessThan(WITHIN_MS);
      // The ai SDK retries every 429 twice; retry-after-ms: 0 makes those retries immediate refusals.
      const last = RetryError.isInstance(error) ? error.lastError : error;
      expect(APICallError.isInstance(last)).toBe(true);
      expect(last).toMatchObject({ statusCode: 429, message: expect.stringContaining('token budget of key') });
    },
    TEST_MS,
  );
});

describe('an RPM limit', () => {
  it('stays retryable: 429 rate_limit_exceeded with a Retry-After of at most a minute and no x-should-retry', async () => {
    await awayFromMinuteEdge();
    const client = new OpenAI({ apiKey: await createKey({ name: 'rpm', rpm: 1 }), baseURL: `${origin}/openai/v1`, maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: 'openai/gpt-test', max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] });
    await ask();
    const refusal = (await ask().catch((error: unknown) => error)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(refusal).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect(Number(refusal.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refusal.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refusal.headers.get('x-should-retry')).toBeNull();
  });
});
