/**
 * Swagger UI in a real browser: Debian's Chromium driven by playwright-core opens /docs on the listening
 * server, every /v1 operation of the document is listed, and one request runs from the page ("Try it out",
 * then "Execute") with the response the server gave shown. Without Chromium the suite fails, naming the fix.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { loadConfig } from '../src/config/config.loader';
import { createHttpApp } from '../src/server/http-server';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

jest.setTimeout(90_000);

let work: string;
let app: NestFastifyApplication;
let browser: Browser | undefined;
let base: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: install Debian's package (apt-get install -y chromium), as npm test does through scripts/start-services.sh`);
  }
  work = mkdtempSync(join(tmpdir(), 'tollgate-docs-browser-'));
  const file = join(work, 'config.yaml');
  // api.auth none: the page calls the API without a token (the UI's Authorize dialog is Swagger's, not ours).
  writeFileSync(file, 'version: 1\napi: { auth: none }\n');
  app = await createHttpApp(loadConfig({ cwd: work, configPath: file, env: {} }), false);
  await app.listen(0, '127.0.0.1');
  base = await app.getUrl();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

it('lists every /v1 operation and runs GET /v1/version from the page', async () => {
  const document = (await (await fetch(`${base}/docs-json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const expected = Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/v1'))
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
  expect(expected).toEqual(expect.arrayContaining(['GET /v1/version', 'POST /v1/generate', 'POST /v1/embeddings', 'POST /v1/agent']));

  const page = await browser!.newPage();
  const failedRequests: string[] = [];
  page.on('requestfailed', (request) => failedRequests.push(request.url()));
  await page.goto(`${base}/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 30_000 });

  const listed = await page.locator('.opblock').evaluateAll((blocks) =>
    blocks.map((block) => {
      const method = block.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '';
      const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
      return `${method} ${path}`;
    }),
  );
  expect(listed.filter((operation) => operation.split(' ')[1].startsWith('/v1')).sort()).toEqual(expected);

  const operation = page.locator('.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/v1/version"]') });
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn').click();
  await operation.locator('button.execute').click();
  const response = operation.locator('.live-responses-table .response').first();
  await response.locator('.response-col_status').waitFor({ timeout: 30_000 });
  expect((await response.locator('.response-col_status').textContent())?.trim()).toBe('200');
  const shownBody = await response.locator('.response-col_description').innerText();
  expect(shownBody).toContain('"api_version": "1"');
  expect(shownBody).toMatch(/"request_id": "[0-9a-f-]{36}"/);
  // The request URL Swagger UI shows is the one it called.
  expect(await operation.locator('.request-url').innerText()).toContain(`${base}/v1/version`);
  expect(failedRequests).toEqual([]);
});
