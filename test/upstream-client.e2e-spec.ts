/** The upstream HTTP client (adapters and search tools) against the scriptable loopback emulator. */
import {
  AuthenticationError,
  ConnectionError,
  InvalidResponseError,
  ProviderError,
  RateLimitError,
  TimeoutError,
  TollgateError,
} from '../src/ai/errors';
import { readSseEvents } from '../src/upstream/stream-framing';
import { UpstreamClient } from '../src/upstream/upstream-client';
import { EmulatorServer, startEmulator } from './emulators/emulator-server';
import { collect } from './support/provider-specs';

describe('UpstreamClient', () => {
  let server: EmulatorServer;
  let http: UpstreamClient;

  beforeAll(async () => {
    server = await startEmulator();
    server.route('POST', '/base/echo', (req) => ({ body: { got: req.body, query: req.query.get('q') } }));
    server.route('GET', '/base/big', () => ({ body: { blob: 'x'.repeat(4096) } }));
    server.route('GET', /^\/base\/items\/(?<id>\w+)$/, (req) => ({ body: { id: req.params.id } }));
    server.route('GET', '/base/sse', () => ({
      chunks: ['data: one\n\n', 'data: two\n\n', 'data: three\n\n'],
      chunkDelayMs: 30,
    }));
    server.route('GET', '/base/slow-sse', () => ({ chunks: ['data: one\n\n', 'data: two\n\n'], chunkDelayMs: 400 }));
    server.route('GET', '/base/many-sse', () => ({ chunks: Array.from({ length: 200 }, (_, i) => `data: ${i}\n\n`) }));
    http = new UpstreamClient({ provider: 'emu', baseUrl: `${server.url}/base/`, timeoutMs: 1000, headers: { 'x-key': 'k1' } });
  });
  afterEach(() => server.reset());
  afterAll(async () => {
    await http.close();
    await server.close();
  });

  it('posts JSON under the base path with default headers and a query string', async () => {
    const response = await http.postJson('/echo', { a: 1 }, { query: { q: 'yes', skipped: undefined }, headers: { 'x-extra': '2' } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ got: { a: 1 }, query: 'yes' });
    const sent = server.lastRequest!;
    expect(sent.path).toBe('/base/echo');
    expect(sent.query.toString()).toBe('q=yes');
    expect(sent.headers).toMatchObject({ 'x-key': 'k1', 'x-extra': '2', 'content-type': 'application/json', accept: 'application/json' });
  });

  it('routes by RegExp with named groups', async () => {
    expect((await http.getJson('/items/abc')).body).toEqual({ id: 'abc' });
  });

  it('reuses keep-alive sockets instead of connecting per call', async () => {
    for (let i = 0; i < 10; i++) await http.getJson(`/items/i${i}`);
    // undici may open a second socket while the first is still being released, never one per call.
    const ports = new Set(server.requests.map((r) => r.remotePort));
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it('maps scripted statuses with the default mapping and reads Retry-After as an HTTP date', async () => {
    server.failNext(401, { body: { error: 'SECRET' } });
    await expect(http.getJson('/items/a')).rejects.toBeInstanceOf(AuthenticationError);
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    server.rateLimitNext(inTwoSeconds);
    const limited = (await http.getJson('/items/a').catch((e) => e)) as RateLimitError;
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited.retryAfterMs).toBeGreaterThan(0);
    expect(limited.retryAfterMs).toBeLessThanOrEqual(2000);
    server.failNext(502, { times: 2 });
    await expect(http.getJson('/items/a')).rejects.toMatchObject({ status: 502 });
    await expect(http.getJson('/items/a')).rejects.toBeInstanceOf(ProviderError);
    expect((await http.getJson('/items/a')).body).toEqual({ id: 'a' });
  });

  it('lets an adapter refine the mapping from the parsed error body', async () => {
    const refined = new UpstreamClient({
      provider: 'emu',
      baseUrl: `${server.url}/base`,
      timeoutMs: 1000,
      mapError: (r) => ((r.body as { code?: string })?.code === 'bad_key' ? new AuthenticationError('emu: refined') : undefined),
    });
    try {
      server.failNext(400, { body: { code: 'bad_key' } });
      await expect(refined.getJson('/items/a')).rejects.toThrow('emu: refined');
      server.failNext(400, { body: { code: 'other' } });
      await expect(refined.getJson('/items/a')).rejects.toMatchObject({ status: 400 });
    } finally {
      await refined.close();
    }
  });

  it('refuses a response over the size bound', async () => {
    const small = new UpstreamClient({ provider: 'emu', baseUrl: `${server.url}/base`, timeoutMs: 1000, maxResponseBytes: 1024 });
    try {
      const error = await small.getJson('/big').catch((e) => e);
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect(error.message).toBe('emu: upstream response exceeded 1024 bytes');
    } finally {
      await small.close();
    }
  });

  it('maps malformed JSON, resets and refused connections', async () => {
    server.malformedNext();
    await expect(http.getJson('/items/a')).rejects.toBeInstanceOf(InvalidResponseError);
    server.resetNext();
    await expect(http.getJson('/items/a')).rejects.toBeInstanceOf(ConnectionError);

    const gone = await startEmulator();
    const url = gone.url;
    await gone.close();
    const refused = new UpstreamClient({ provider: 'emu', baseUrl: url, timeoutMs: 1000 });
    try {
      const error = await refused.getJson('/x').catch((e) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error.message).toBe('emu: could not reach upstream (ECONNREFUSED)');
    } finally {
      await refused.close();
    }
  });

  it('times out with TimeoutError and the emulator observes the disconnect', async () => {
    server.delayNext(Infinity);
    const error = await http.getJson('/items/a', { timeoutMs: 80 }).catch((e) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toBe('emu: upstream did not answer within 80 ms');
    await server.waitForAbort();
  });

  it('returns the caller abort reason, also for an already-aborted signal', async () => {
    const reason = new Error('stop now');
    await expect(http.getJson('/items/a', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    server.delayNext(Infinity);
    const controller = new AbortController();
    const pending = http.getJson('/items/a', { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 30);
    await expect(pending).rejects.toBe(reason);
  });

  it('reads a slow 2xx body within the same timeout and answers TimeoutError when it runs out', async () => {
    server.route('GET', '/base/slow-json', () => ({ chunks: ['{"a":', '1}'], chunkDelayMs: 300 }));
    const error = await http.getJson('/slow-json', { timeoutMs: 150 }).catch((e) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toBe('emu: upstream did not answer within 150 ms');
    expect((await http.getJson('/slow-json', { timeoutMs: 1000 })).body).toEqual({ a: 1 });
  });

  it('lets a timeout or a caller abort while an error body is read win over the status', async () => {
    server.route('GET', '/base/slow-error', () => ({ status: 429, chunks: ['{"error":', '{}}'], chunkDelayMs: 300 }));
    await expect(http.getJson('/slow-error', { timeoutMs: 150 })).rejects.toBeInstanceOf(TimeoutError);
    const reason = new Error('stop now');
    const controller = new AbortController();
    const pending = http.getJson('/slow-error', { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 100);
    await expect(pending).rejects.toBe(reason);
    await expect(http.getJson('/slow-error')).rejects.toBeInstanceOf(RateLimitError);
  });

  it('reads at most 64 KiB of an error body and still maps the status', async () => {
    const bodies: unknown[] = [];
    const refined = new UpstreamClient({
      provider: 'emu',
      baseUrl: `${server.url}/base`,
      timeoutMs: 1000,
      mapError: (r) => {
        bodies.push(r.body);
        return undefined;
      },
    });
    try {
      server.failNext(400, { body: { code: 'small' } });
      await expect(refined.getJson('/items/a')).rejects.toMatchObject({ status: 400 });
      server.failNext(400, { body: { code: 'big', pad: 'x'.repeat(200 * 1024) } });
      await expect(refined.getJson('/items/a')).rejects.toMatchObject({ status: 400 });
      expect(bodies).toEqual([{ code: 'small' }, undefined]);
      expect((await refined.getJson('/items/a')).body).toEqual({ id: 'a' });
    } finally {
      await refined.close();
    }
  });

  it('hands an error thrown by the adapter mapper to the caller', async () => {
    const mapperError = new Error('mapper broke');
    const refined = new UpstreamClient({
      provider: 'emu',
      baseUrl: `${server.url}/base`,
      timeoutMs: 1000,
      mapError: () => {
        throw mapperError;
      },
    });
    try {
      server.failNext(500);
      await expect(refined.getJson('/items/a')).rejects.toBe(mapperError);
    } finally {
      await refined.close();
    }
  });

  it('streams SSE events with a per-chunk idle timeout', async () => {
    const response = await http.stream('GET', '/sse', undefined, { timeoutMs: 200 });
    const events = await collect(readSseEvents(response.body));
    // 3 chunks x 30 ms apart outlive no timer because each chunk re-arms it.
    expect(events.map((e) => e.data)).toEqual(['one', 'two', 'three']);

    const slow = await http.stream('GET', '/slow-sse', undefined, { timeoutMs: 150 });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of readSseEvents(slow.body)) seen.push(event.data);
    })().catch((e) => e);
    expect(seen).toEqual(['one']);
    expect(error).toBeInstanceOf(TimeoutError);
  });

  it('ends the upstream request when a stream consumer stops early', async () => {
    const response = await http.stream('GET', '/slow-sse', undefined);
    for await (const event of readSseEvents(response.body)) {
      expect(event.data).toBe('one');
      break;
    }
    await server.waitForAbort();
  });

  it('keeps the connection of a stream read to the end for the next call', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await http.stream('GET', '/sse', undefined);
      const events = await collect(readSseEvents(response.body));
      expect(events.map((e) => e.data)).toEqual(['one', 'two', 'three']);
    }
    // As for JSON calls: a second socket may open while the first is released, never one per call.
    expect(new Set(server.requestsTo('/base/sse').map((r) => r.remotePort)).size).toBeLessThanOrEqual(2);
    expect(server.requests.some((r) => r.aborted)).toBe(false);
  });

  it('delivers every chunk in order to a consumer slower than the upstream (the socket pauses, nothing is lost)', async () => {
    const response = await http.stream('GET', '/many-sse', undefined);
    const seen: string[] = [];
    for await (const event of readSseEvents(response.body)) {
      seen.push(event.data);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
  });

  it("hands back the caller's abort reason mid-stream and ends the upstream request", async () => {
    const controller = new AbortController();
    const response = await http.stream('GET', '/slow-sse', undefined, { signal: controller.signal });
    const reason = new Error('caller gave up');
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of readSseEvents(response.body)) {
        seen.push(event.data);
        controller.abort(reason);
      }
    })().catch((e) => e);
    expect(seen).toEqual(['one']);
    expect(error).toBe(reason);
    await server.waitForAbort();
  });

  it('times out a stream whose headers never come, and refuses a stream for an already aborted caller', async () => {
    server.delayNext(Infinity);
    const error = await http.stream('GET', '/sse', undefined, { timeoutMs: 80 }).catch((e) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toBe('emu: upstream did not answer within 80 ms');

    const reason = new Error('already gone');
    await expect(http.stream('GET', '/sse', undefined, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('reads at most 64 KiB of a stream request error body and still maps its status', async () => {
    server.failNext(429, { body: { error: 'x'.repeat(200 * 1024) }, headers: { 'retry-after': '3' } });
    const error = await http.stream('GET', '/sse', undefined).catch((e) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfterMs).toBe(3000);
  });

  it('maps a non-2xx answer to a stream request like any other', async () => {
    server.failNext(503);
    await expect(http.stream('GET', '/sse', undefined)).rejects.toMatchObject({ status: 503 });
  });

  it('rejects a url that is not http(s) with its own message', () => {
    expect(() => new UpstreamClient({ provider: 'emu', baseUrl: 'ftp://x', timeoutMs: 1 })).toThrow(TollgateError);
    expect(() => new UpstreamClient({ provider: 'emu', baseUrl: 'not a url', timeoutMs: 1 })).toThrow('emu: provider url is not a valid URL');
  });
});

describe('EmulatorServer', () => {
  it('counts only client disconnects as aborts, answers unknown routes 404, and applies path-scoped faults', async () => {
    const server = await startEmulator();
    server.route('GET', '/a', () => ({ body: { ok: true } }));
    const http = new UpstreamClient({ provider: 'emu', baseUrl: server.url, timeoutMs: 1000 });
    try {
      server.resetNext();
      await expect(http.getJson('/a')).rejects.toBeInstanceOf(ConnectionError);
      expect(server.lastRequest!.aborted).toBe(false);

      await expect(http.getJson('/nope')).rejects.toMatchObject({ status: 404 });

      server.inject({ kind: 'status', status: 500 }, 1, '/b');
      expect((await http.getJson('/a')).body).toEqual({ ok: true });
      await expect(http.getJson('/b')).rejects.toMatchObject({ status: 500 });
      expect(server.requestsTo('/a')).toHaveLength(2);
    } finally {
      await http.close();
      await server.close();
    }
  });
});
