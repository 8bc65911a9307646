/**
 * `"stream": true` on POST /v1/generate, over a real socket (the server listening on loopback, fetch as the
 * client) against emulators of every provider kind streaming their own wire format: the same answer as the
 * JSON route, fallback and errors before the first byte as ordinary JSON, an `error` event after it, and a
 * client disconnect seen upstream at once.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.loader';
import { createHttpApp } from '../src/server/http-server';
import { ANTHROPIC_BODY_MARKER, ANTHROPIC_EMULATOR_KEY, startAnthropicEmulator, type AnthropicEmulator } from './emulators/anthropic-emulator';
import { GEMINI_BODY_MARKER, GEMINI_EMULATOR_KEY, startGeminiEmulator, type GeminiEmulator } from './emulators/gemini-emulator';
import { OLLAMA_BODY_MARKER, startOllamaEmulator, type OllamaEmulator } from './emulators/ollama-emulator';
import { OpenAiEmulator, type OpenAiFlavour, UPSTREAM_MARKER } from './emulators/openai-emulator';
import { SEARCH_UPSTREAM_MARKER, SearxngEmulator } from './emulators/searxng-emulator';

const KEY = 'sk-streaming-rest-KEY-0451';
const TOKEN = 'api-token-for-streaming-tests';
const METRICS_TOKEN = 'metrics-token-for-streaming-tests';
const OPENAI_FLAVOURS: OpenAiFlavour[] = ['openai', 'mistral', 'deepseek', 'xai', 'huggingface', 'compatible'];
const MARKERS = [UPSTREAM_MARKER, ANTHROPIC_BODY_MARKER, GEMINI_BODY_MARKER, OLLAMA_BODY_MARKER, SEARCH_UPSTREAM_MARKER, KEY];

const openAiFamily = new Map<OpenAiFlavour, OpenAiEmulator>();
let anthropic: AnthropicEmulator;
let gemini: GeminiEmulator;
let ollama: OllamaEmulator;
let searxng: SearxngEmulator;
let work: string;
let app: NestFastifyApplication;
let base: string;

/** Registration name and kind of each emulator, in fallback order. */
const KINDS: Record<OpenAiFlavour, string> = {
  openai: 'openai',
  mistral: 'mistral',
  deepseek: 'deepseek',
  xai: 'xai',
  huggingface: 'huggingface',
  compatible: 'openai_compatible',
};

beforeAll(async () => {
  await Promise.all(
    OPENAI_FLAVOURS.map(async (flavour) => {
      openAiFamily.set(flavour, await OpenAiEmulator.start({ flavour, apiKey: flavour === 'compatible' ? undefined : KEY }));
    }),
  );
  [anthropic, gemini, ollama, searxng] = await Promise.all([startAnthropicEmulator(), startGeminiEmulator(), startOllamaEmulator(), SearxngEmulator.start()]);
  work = mkdtempSync(join(tmpdir(), 'tollgate-streaming-'));
  const providers = [
    ...OPENAI_FLAVOURS.map((flavour) => {
      const key = flavour === 'compatible' ? '' : `, api_key: ${KEY}`;
      return `  ${KINDS[flavour]}: { kind: ${KINDS[flavour]}, url: "${openAiFamily.get(flavour)!.url}", chat_model: gpt-test${key} }`;
    }),
    `  anthropic: { url: "${anthropic.url}", api_key: ${ANTHROPIC_EMULATOR_KEY}, chat_model: claude-haiku-4-5 }`,
    `  gemini: { url: "${gemini.url}", api_key: ${GEMINI_EMULATOR_KEY}, chat_model: gemini-2.5-flash }`,
    `  ollama: { url: "${ollama.url}", chat_model: llama3.2 }`,
    `  impatient: { kind: openai, url: "${openAiFamily.get('openai')!.url}", api_key: ${KEY}, chat_model: gpt-test, timeout: 0.4 }`,
  ];
  const file = join(work, 'config.yaml');
  writeFileSync(
    file,
    `version: 1\nai: { default_provider: openai, retry_attempts: 0, fallback_providers: [anthropic] }\nmetrics: { enabled: true }\nproviders:\n${providers.join('\n')}\n`,
  );
  const env = { API_TOKEN: TOKEN, METRICS_TOKEN, SEARXNG_URL: searxng.url, SEARXNG_ALLOW_PRIVATE_NETWORK: 'true' };
  app = await createHttpApp(loadConfig({ cwd: work, configPath: file, env }), false);
  await app.listen(0, '127.0.0.1');
  base = await app.getUrl();
});

afterAll(async () => {
  await Promise.all([...openAiFamily.values()].map((e) => e.close()));
  await Promise.all([anthropic?.close(), gemini?.close(), ollama?.close(), searxng?.close()]);
  await app?.close();
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  for (const emulator of [...openAiFamily.values()]) emulator.server.reset();
  for (const emulator of [anthropic, gemini, ollama]) emulator.server.reset();
  anthropic.options.streamError = undefined;
  searxng.reset();
});

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

function generate(body: Record<string, unknown>, path = '/v1/generate'): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Parses a whole text/event-stream body; every frame of ours has one event line and one data line. */
function parseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: (results|delta|done|error)$/);
      expect(lines[1]).toMatch(/^data: /);
      return { event: lines[0].slice('event: '.length), data: JSON.parse(lines[1].slice('data: '.length)) };
    });
}

async function streamOf(response: Response): Promise<SseEvent[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  expect(response.headers.get('cache-control')).toBe('no-cache');
  const text = await response.text();
  for (const marker of MARKERS) expect(text).not.toContain(marker);
  return parseEvents(text);
}

const texts = (events: SseEvent[]) => events.filter((e) => e.event === 'delta').map((e) => e.data.text as string);

describe('POST /v1/generate with stream: true', () => {
  it.each(['openai', 'mistral', 'deepseek', 'xai', 'huggingface', 'openai_compatible', 'anthropic', 'gemini', 'ollama'])(
    '%s: deltas add up to the JSON answer, then one done with the same provider, model, finish reason and usage',
    async (provider) => {
      const request = { prompt: 'Say a few words please', provider, max_tokens: 50 };
      const streamed = await generate({ ...request, stream: true });
      const requestId = streamed.headers.get('x-request-id');
      const events = await streamOf(streamed);
      const whole = (await (await generate(request)).json()) as Record<string, unknown>;

      expect(texts(events).length).toBeGreaterThan(1);
      expect(texts(events).join('')).toBe(whole.response);
      expect(events.filter((e) => e.event === 'done')).toHaveLength(1);
      const done = events.at(-1)!;
      expect(done.event).toBe('done');
      expect(done.data).toEqual({
        provider: whole.provider,
        model: whole.model,
        finish_reason: whole.finish_reason,
        usage: whole.usage,
        request_id: requestId,
      });
      expect(done.data.provider).toBe(provider);
      expect(done.data.usage).toEqual({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    },
  );

  it('falls back before the first byte: the stream comes from the fallback provider', async () => {
    const openai = openAiFamily.get('openai')!;
    openai.serverErrorNext(503);
    const events = await streamOf(await generate({ prompt: 'fall over', stream: true }));
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { provider: 'anthropic', model: 'claude-haiku-4-5' } });
    expect(openai.server.requests).toHaveLength(1);
    expect(anthropic.server.requests).toHaveLength(1);
  });

  it('a failure before the first byte is the ordinary JSON error with its status', async () => {
    const openai = openAiFamily.get('openai')!;
    openai.serverErrorNext(503);
    const response = await generate({ prompt: 'no fallback', stream: true, enable_fallback: false });
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await response.json();
    expect(body).toEqual({
      error: { type: 'provider_error', message: 'openai: upstream returned 503' },
      request_id: response.headers.get('x-request-id'),
    });
    expect(anthropic.server.requests).toHaveLength(0);
  });

  it('a failure after the first byte is one error event with the envelope; no fallback then', async () => {
    const openai = openAiFamily.get('openai')!;
    openai.midStreamErrorNext();
    const response = await generate({ prompt: 'break halfway', stream: true });
    const requestId = response.headers.get('x-request-id');
    const events = await streamOf(response);
    expect(texts(events)).toEqual(['echo: ']);
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { error: { type: 'provider_error', message: 'openai: upstream reported an error mid-stream' }, request_id: requestId },
    });
    expect(events.some((e) => e.event === 'done')).toBe(false);
    expect(anthropic.server.requests).toHaveLength(0);
  });

  it('a connection lost mid-stream is an error event too', async () => {
    ollama.server.inject({ kind: 'stream', cutAfter: 2 });
    const events = await streamOf(await generate({ prompt: 'cut me off', provider: 'ollama', stream: true }));
    expect(texts(events).length).toBeGreaterThan(0);
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { error: { type: 'connection_error', message: expect.stringMatching(/^ollama: /) } } });
    expect(anthropic.server.requests).toHaveLength(0);
    expect(ollama.server.requests).toHaveLength(1);
  });

  it('a stall before the first delta times out and falls back like a JSON call', async () => {
    const openai = openAiFamily.get('openai')!;
    openai.server.inject({ kind: 'stream', stallAfter: 1 });
    const events = await streamOf(await generate({ prompt: 'stall at once', provider: 'impatient', stream: true }));
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { provider: 'anthropic' } });
    expect(openai.server.lastRequest!.aborted).toBe(true);
  });

  it('the timeout applies to each gap between chunks: a stall after the first delta ends with a timeout error event', async () => {
    const openai = openAiFamily.get('openai')!;
    openai.server.inject({ kind: 'stream', stallAfter: 2 });
    const events = await streamOf(await generate({ prompt: 'stall after the first words', provider: 'impatient', stream: true }));
    expect(texts(events)).toEqual(['echo: ']);
    expect(events.at(-1)).toMatchObject({
      event: 'error',
      data: { error: { type: 'timeout', message: 'impatient: upstream did not answer within 400 ms' } },
    });
    expect(anthropic.server.requests).toHaveLength(0);
  });

  it('a refusal before the first delta (Anthropic error event after message_start) is still the JSON error', async () => {
    anthropic.options.streamError = 'overloaded_error';
    const response = await generate({ prompt: 'refused', provider: 'anthropic', stream: true, enable_fallback: false });
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await response.text();
    expect(JSON.parse(text).error.message).toMatch(/^anthropic: /);
    expect(text).not.toContain(ANTHROPIC_BODY_MARKER);
  });

  it('a client that disconnects mid-stream aborts the upstream request at once', async () => {
    const openai = openAiFamily.get('openai')!;
    openai.server.inject({ kind: 'stream', chunkDelayMs: 1500 });
    // node:http, so the disconnect is a closed socket, as with a browser tab or curl going away.
    const disconnectedAt = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${base}/v1/generate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      });
      request.on('error', reject);
      request.on('response', (response) => {
        let received = '';
        response.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
          if (!received.includes('event: delta')) return;
          request.destroy();
          resolve(Date.now());
        });
      });
      request.end(JSON.stringify({ prompt: 'a long slow answer with many words', stream: true }));
    });
    await openai.server.waitForAbort();
    // Seen upstream well before the emulator's next chunk was due.
    expect(Date.now() - disconnectedAt).toBeLessThan(750);
    expect(openai.server.lastRequest!.aborted).toBe(true);
  });

  it('streamed requests are counted by the HTTP metrics like any other response', async () => {
    const scrape = async () => {
      const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      const series = 'tollgate_http_requests_total{method="POST",route="/v1/generate",status="200"} ';
      const line = metrics.split('\n').find((candidate) => candidate.startsWith(series));
      return line === undefined ? 0 : Number(line.slice(series.length));
    };
    const before = await scrape();
    await streamOf(await generate({ prompt: 'count me', stream: true }));
    expect(await scrape()).toBe(before + 1);
  });

  it('refuses a stream that is not a boolean, naming the field', async () => {
    const response = await generate({ prompt: 'x', stream: 'yes' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: unknown };
    expect(body.error).toEqual({ type: 'invalid_request', message: 'stream must be a boolean value' });
    expect(openAiFamily.get('openai')!.server.requests).toHaveLength(0);
  });
});

describe('POST /v1/search/generate with stream: true', () => {
  it('sends the search results as the first event, then the generation over them', async () => {
    const response = await generate({ query: 'what is fastify', limit: 2, stream: true }, '/v1/search/generate');
    const requestId = response.headers.get('x-request-id');
    const events = await streamOf(response);
    expect(events[0]).toMatchObject({ event: 'results', data: { tool: 'web_search', source: 'searxng', query: 'what is fastify', count: 2, request_id: requestId } });
    expect((events[0].data.results as unknown[]).length).toBe(2);
    expect(texts(events).join('')).toContain('[2] title: Result 2 for what is fastify');
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { provider: 'openai', model: 'gpt-test', request_id: requestId } });
  });

  it('a search failure is a JSON error before anything is streamed', async () => {
    searxng.server.failNext(503);
    const response = await generate({ query: 'down', stream: true, fallback: false }, '/v1/search/generate');
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/^web_search: /);
    expect(openAiFamily.get('openai')!.server.requests).toHaveLength(0);
  });
});
