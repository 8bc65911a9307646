import {
  AuthenticationError,
  ConnectionError,
  InvalidResponseError,
  ModelNotAvailableError,
  ProviderError,
  RateLimitError,
  TimeoutError,
} from '../common/errors';
import { mapNetworkError, mapUpstreamError, parseJson, parseRetryAfter, retryAfterFromHeaders } from './upstream-errors';

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
