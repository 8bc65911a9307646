/**
 * Image URLs the gateway downloads (for Ollama and Gemini, which take image bytes only), driven through
 * /openai/v1/chat/completions against a loopback image host: what a refused request leaves behind at that
 * host, and the `ai.images` bounds as a caller meets them. `images.test` resolves to the image host through
 * the downloader's DNS seam; everything else (URL guard, bounds, downloads) is the real thing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction, Socket } from 'node:net';
import * as imageDownloads from '../src/ai/providers/image-downloads';
import { publicOnlyLookup } from '../src/ai/tools/tool-url-guard';
import { GEMINI_EMULATOR_KEY, type GeminiEmulator, startGeminiEmulator } from './emulators/gemini-emulator';
import { type OllamaEmulator, startOllamaEmulator } from './emulators/ollama-emulator';
import { TestApps } from './support/test-apps';

const TOKEN = 'image-downloads-token-0123456789';
const IMAGE_HOST = 'images.test';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

type Route = (req: IncomingMessage, res: ServerResponse) => void;

const imageLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  if (hostname !== IMAGE_HOST) return (publicOnlyLookup as LookupFunction)(hostname, options, callback as never);
  return options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
}) as LookupFunction;

const routes: Record<string, Route> = {
  '/cat.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG),
  // Headers and a first chunk, then nothing: a slow host.
  '/slow.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).write(PNG),
  // Accepts the connection and never answers.
  '/silent.png': () => undefined,
  // Refused after the slow downloads beside it have started.
  '/late-missing.png': (_req, res) => setTimeout(() => res.writeHead(404).end(), 300),
  '/600k.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(600 * 1024)),
};

let imageHost: Server;
const imageSockets = new Set<Socket>();
const imageRequests: string[] = [];
let ollama: OllamaEmulator;
let gemini: GeminiEmulator;
let apps: TestApps;
let defaults: string;
let bounded: string;

const imageUrl = (path: string, index = 0) => `http://${IMAGE_HOST}:${(imageHost.address() as AddressInfo).port}${path}?n=${index}`;

/** Polls `read` until it answers `expected` or `ms` pass; answers the last value read. */
async function settlesTo<T>(read: () => T, expected: T, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  while (read() !== expected && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
  return read();
}

/** Posts a chat completion whose one user message holds `urls` as image parts; answers status and error message. */
async function chat(origin: string, model: string, urls: readonly string[]): Promise<{ status: number; message: string | undefined }> {
  const content = [{ type: 'text', text: 'Describe' }, ...urls.map((url) => ({ type: 'image_url', image_url: { url } }))];
  const response = await fetch(`${origin}/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  const body = (await response.json()) as { error?: { message?: string } };
  return { status: response.status, message: body.error?.message };
}

beforeAll(async () => {
  imageHost = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    imageRequests.push(path);
    (routes[path] ?? ((_req, reply) => reply.writeHead(404).end()))(req, res);
  });
  imageHost.on('connection', (socket) => {
    imageSockets.add(socket);
    socket.on('close', () => imageSockets.delete(socket));
  });
  await new Promise<void>((resolve) => imageHost.listen(0, '127.0.0.1', resolve));
  // Installed before the gateways build their adapters, which take the process's downloader then.
  jest.spyOn(imageDownloads, 'createImageDownloader').mockImplementation((limits) => new imageDownloads.ImageDownloader(limits, { lookup: imageLookup }));
  [ollama, gemini] = await Promise.all([startOllamaEmulator({ models: ['llava:latest'] }), startGeminiEmulator()]);
  apps = new TestApps('tollgate-image-downloads-', { API_TOKEN: TOKEN });
  const providers = [
    'providers:',
    `  ollama: { url: "${ollama.url}", chat_model: llava, timeout: 5 }`,
    `  gemini: { url: "${gemini.url}", api_key: "${GEMINI_EMULATOR_KEY}", chat_model: gemini-2.5-flash, timeout: 5 }`,
  ];
  defaults = (await apps.listen(['version: 1', 'ai: { retry_attempts: 0, enable_fallback: false }', ...providers, ''].join('\n'))).origin;
  bounded = (
    await apps.listen(
      ['version: 1', 'ai: { retry_attempts: 0, enable_fallback: false, images: { max_per_request: 3, max_total_bytes: 1048576, timeout: 1 } }', ...providers, ''].join(
        '\n',
      ),
    )
  ).origin;
});

afterAll(async () => {
  await apps?.close();
  await Promise.all([ollama?.close(), gemini?.close()]);
  for (const socket of imageSockets) socket.destroy();
  await new Promise<void>((resolve) => (imageHost ? imageHost.close(() => resolve()) : resolve()));
  jest.restoreAllMocks();
});

beforeEach(() => {
  imageRequests.length = 0;
  ollama.server.reset();
  gemini.server.reset();
});

describe.each([
  ['ollama', 'ollama/llava', () => ollama.server.requestsTo('/api/chat')],
  ['gemini', 'gemini/gemini-2.5-flash', () => gemini.server.requests],
])('%s: image downloads', (_name, model, upstreamRequests) => {
  it('a refused image ends every other download of the request: no socket stays open at the slow host after the 400', async () => {
    // The refused URL among the first to start; twelve slow ones around it.
    const urls = Array.from({ length: 13 }, (_, index) => imageUrl(index === 1 ? '/late-missing.png' : '/slow.png', index));
    const answer = await chat(defaults, model, urls);
    expect(answer.status).toBe(400);
    expect(answer.message).toContain(`image at ${IMAGE_HOST}:`);
    expect(answer.message).toContain('answered HTTP 404');
    expect(imageRequests).toContain('/slow.png');
    expect(await settlesTo(() => imageSockets.size, 0)).toBe(0);
    expect(upstreamRequests()).toHaveLength(0);
  });

  it('more image URLs than ai.images.max_per_request (16 by default): 400 naming the limit, before any download', async () => {
    const answer = await chat(defaults, model, Array.from({ length: 17 }, (_, index) => imageUrl('/cat.png', index)));
    expect(answer).toEqual({ status: 400, message: 'the request gives 17 image URLs; at most 16 are downloaded per request (ai.images.max_per_request)' });
    expect(imageRequests).toEqual([]);
    await expect(chat(defaults, model, Array.from({ length: 16 }, (_, index) => imageUrl('/cat.png', index)))).resolves.toMatchObject({ status: 200 });
  });

  it('the configured bounds: images per request, bytes per request, and a deadline per download, each named', async () => {
    const many = await chat(bounded, model, Array.from({ length: 4 }, (_, index) => imageUrl('/cat.png', index)));
    expect(many).toEqual({ status: 400, message: 'the request gives 4 image URLs; at most 3 are downloaded per request (ai.images.max_per_request)' });
    const heavy = await chat(bounded, model, [imageUrl('/600k.png', 0), imageUrl('/600k.png', 1)]);
    expect(heavy.status).toBe(400);
    expect(heavy.message).toMatch(/brings the request's images past 1048576 bytes together \(ai\.images\.max_total_bytes\)$/);
    const started = Date.now();
    const silent = await chat(bounded, model, [imageUrl('/silent.png')]);
    expect(silent).toEqual({ status: 400, message: expect.stringMatching(/: did not download within 1 s \(ai\.images\.timeout\)$/) });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(await settlesTo(() => imageSockets.size, 0)).toBe(0);
    expect(upstreamRequests()).toHaveLength(0);
  });
});
