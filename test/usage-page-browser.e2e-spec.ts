/**
 * The usage page in a real browser: Debian's Chromium driven by playwright-core opens /usage on a listening
 * server whose ledger holds calls of two tenants (made through /openai/v1 with API keys, the OpenAI emulator
 * upstream). The admin token shows every tenant's bars, a tenant's key only its own, and a bad token an error.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadConfig } from '../src/config/config.loader';
import { createHttpApp } from '../src/server/http-server';
import { OpenAiEmulator } from './emulators/openai-emulator';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ADMIN_TOKEN = 'admin-token-for-the-usage-page';
const UPSTREAM_KEY = 'sk-usage-page';

jest.setTimeout(90_000);

let work: string;
let app: NestFastifyApplication;
let upstream: OpenAiEmulator;
let browser: Browser | undefined;
let base: string;
const keys: Record<string, string> = {};

async function post(path: string, token: string, body: unknown): Promise<Record<string, any>> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as Record<string, any>;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: install Debian's package (apt-get install -y chromium), as npm test does through scripts/start-services.sh`);
  }
  upstream = await OpenAiEmulator.start({ apiKey: UPSTREAM_KEY, chatModels: ['gpt-test', 'gpt-other'] });
  work = mkdtempSync(join(tmpdir(), 'tollgate-usage-page-'));
  const file = join(work, 'config.yaml');
  writeFileSync(
    file,
    [
      'version: 1',
      'providers:',
      `  openai: { url: "${upstream.url}", api_key: "${UPSTREAM_KEY}", chat_model: gpt-test, models: [gpt-other] }`,
      'governance:',
      `  admin_token: "${ADMIN_TOKEN}"`,
      '  ledger: { store: memory, flush_interval: 0.05 }',
      '',
    ].join('\n'),
  );
  app = await createHttpApp(loadConfig({ cwd: work, configPath: file, env: {} }), false);
  await app.listen(0, '127.0.0.1');
  base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  for (const tenant of ['acme', 'globex']) keys[tenant] = (await post('/v1/admin/keys', ADMIN_TOKEN, { tenant })).key as string;
  // acme: two calls on gpt-test, one on gpt-other; globex: one on gpt-test. The emulator reports 7 + 3 tokens each.
  for (const [tenant, model] of [['acme', 'gpt-test'], ['acme', 'gpt-test'], ['acme', 'gpt-other'], ['globex', 'gpt-test']]) {
    await post('/openai/v1/chat/completions', keys[tenant], { model, messages: [{ role: 'user', content: 'Hello' }] });
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await upstream?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Opens the page, submits `token`, and waits for the charts or the error line. */
async function show(token: string): Promise<Page> {
  const page = await browser!.newPage();
  await page.goto(`${base}/usage`);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForFunction("document.body.dataset.loaded === 'true' || document.getElementById('error').textContent !== ''");
  return page;
}

const bars = (page: Page, chart: string) =>
  page.$$eval(`#${chart} rect`, (rects) =>
    Object.fromEntries(rects.map((rect) => [rect.getAttribute('data-group'), Number(rect.getAttribute('data-value'))])),
  );

it('the admin token shows every tenant: tokens per model and per day as bars', async () => {
  const page = await show(ADMIN_TOKEN);
  expect(await page.textContent('#error')).toBe('');
  expect(await bars(page, 'chart-tokens-model')).toEqual({ 'openai/gpt-test': 30, 'openai/gpt-other': 10 });
  const today = new Date().toISOString().slice(0, 10);
  expect(await bars(page, 'chart-tokens-day')).toEqual({ [today]: 40 });
  expect(await page.textContent('#totals')).toContain('4 calls, 40 tokens');
  await page.close();
});

it("a tenant's key sees only its own tenant", async () => {
  const page = await show(keys.globex);
  expect(await bars(page, 'chart-tokens-model')).toEqual({ 'openai/gpt-test': 10 });
  expect(await page.textContent('#totals')).toContain('1 calls, 10 tokens');
  await page.close();
});

it('a bad token shows the API\'s error message and draws nothing', async () => {
  const page = await show('not-a-valid-token');
  expect(await page.textContent('#error')).toMatch(/token|key/i);
  expect(await bars(page, 'chart-tokens-model')).toEqual({});
  await page.close();
});

it('serves the page and its script only, with a policy that allows no other script', async () => {
  const html = await fetch(`${base}/usage`);
  expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");
  expect(await html.text()).toContain('<script src="usage/usage.js"></script>');
  expect((await fetch(`${base}/usage/usage.js`)).headers.get('content-type')).toContain('javascript');
});
