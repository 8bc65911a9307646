import {
  AuthenticationError,
  ConnectionError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  RateLimitError,
  TimeoutError,
} from '../errors';
import {
  mapNetworkError,
  mapUpstreamError,
  parseJson,
  parseRetryAfter,
  readLines,
  readNdjson,
  readSseEvents,
  retryAfterFromHeaders,
} from './provider-http';

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

async function* chunks(...parts: Array<string | Buffer>): AsyncGenerator<Buffer> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads delta seconds, including decimals', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0.25 ', now)).toBe(250);
    expect(parseRetryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP date relative to now, never negative', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  });

  it('ignores values that are neither', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1e3', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('prefers retry-after-ms over retry-after', () => {
    expect(retryAfterFromHeaders({ 'retry-after-ms': '1500', 'retry-after': '9' }, now)).toBe(1500);
    expect(retryAfterFromHeaders({ 'retry-after-ms': 'bogus', 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterFromHeaders({}, now)).toBeUndefined();
  });
});

describe('mapUpstreamError', () => {
  const base = { provider: 'p', headers: {}, body: { error: 'SECRET-BODY' } };

  it('maps statuses to error classes with Tollgate-written messages', () => {
    expect(mapUpstreamError({ ...base, status: 401 })).toBeInstanceOf(AuthenticationError);
    expect(mapUpstreamError({ ...base, status: 403 })).toBeInstanceOf(AuthenticationError);
    expect(mapUpstreamError({ ...base, status: 404, model: 'm1' })).toBeInstanceOf(ModelNotAvailableError);
    const notFound = mapUpstreamError({ ...base, status: 404 });
    expect(notFound).toBeInstanceOf(ProviderError);
    expect((notFound as ProviderError).status).toBe(404);
    const unavailable = mapUpstreamError({ ...base, status: 503 });
    expect(unavailable).toBeInstanceOf(ProviderError);
    expect(unavailable.message).toBe('p: upstream returned 503');
    expect((mapUpstreamError({ ...base, status: 422 }) as ProviderError).status).toBe(422);
  });

  it('carries Retry-After on 429', () => {
    const error = mapUpstreamError({ ...base, status: 429, headers: { 'retry-after': '7' } });
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(7000);
  });

  it('never puts the body in the message', () => {
    for (const status of [400, 401, 404, 429, 500]) {
      expect(mapUpstreamError({ ...base, status, model: 'm' }).message).not.toContain('SECRET-BODY');
    }
  });

  it('names a model only when the name is plain', () => {
    expect(mapUpstreamError({ ...base, status: 404, model: 'org/model-1:latest' }).message).toContain("'org/model-1:latest'");
    expect(mapUpstreamError({ ...base, status: 404, model: 'bad name\n<script>' }).message).not.toContain('script');
  });
});

describe('mapNetworkError', () => {
  it('names the code, not the host', () => {
    const error = mapNetworkError(Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:443'), { code: 'ECONNREFUSED' }), 'p');
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).not.toBeInstanceOf(TimeoutError);
    expect(error.message).toBe('p: could not reach upstream (ECONNREFUSED)');
  });

  it('finds codes in causes and aggregate errors, and treats connect timeouts as timeouts', () => {
    const aggregate = new AggregateError([Object.assign(new Error('x'), { code: 'ENOTFOUND' })]);
    expect(mapNetworkError(new Error('fetch failed', { cause: aggregate }), 'p').message).toContain('ENOTFOUND');
    expect(mapNetworkError(Object.assign(new Error('t'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), 'p')).toBeInstanceOf(TimeoutError);
    expect(mapNetworkError(new Error('other socket hang up'), 'p').message).toBe('p: could not reach upstream');
  });
});

describe('parseJson', () => {
  it('hides the parser message', () => {
    expect(() => parseJson('{"a": SECRET', 'p')).toThrow(InvalidResponseError);
    try {
      parseJson('{"a": SECRET', 'p');
    } catch (error) {
      expect((error as Error).message).toBe('p: upstream returned malformed JSON');
    }
  });
});

describe('stream readers', () => {
  it('splits LF and CRLF lines across chunk boundaries and multi-byte characters', async () => {
    const euro = Buffer.from('€');
    const lines = await collect(readLines(chunks('a\r', '\nb', Buffer.concat([Buffer.from('c'), euro.subarray(0, 1)]), euro.subarray(1), '\nlast')));
    expect(lines).toEqual(['a', 'bc€', 'last']);
  });

  it('frames server-sent events: multi-line data, comments, event names, unterminated tail', async () => {
    const events = await collect(
      readSseEvents(chunks(': keep-alive\n\n', 'event: delta\ndata: {"a":', '1}\n\n', 'data: one\ndata: two\n\n', 'data: [DONE]')),
    );
    expect(events).toEqual([
      { event: 'delta', data: '{"a":1}' },
      { event: undefined, data: 'one\ntwo' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('refuses a line that never ends instead of buffering it', async () => {
    const endless = (async function* () {
      for (let i = 0; i < 20; i++) yield Buffer.alloc(100 * 1024, 'a');
    })();
    await expect(collect(readLines(endless, 'p'))).rejects.toThrow('p: upstream stream line exceeded 1048576 characters');
  });

  it('parses NDJSON and rejects a malformed line as InvalidResponseError', async () => {
    expect(await collect(readNdjson(chunks('{"a":1}\n\n{"b"', ':2}\n'), 'p'))).toEqual([{ a: 1 }, { b: 2 }]);
    await expect(collect(readNdjson(chunks('{"a":1}\nnot json\n'), 'p'))).rejects.toThrow(InvalidResponseError);
  });
});
