import { defaultLogLevel, REDACTED, redactHeaders } from './logging';

describe('redactHeaders', () => {
  it('replaces credentials of any spelling and keeps the rest', () => {
    expect(
      redactHeaders({
        authorization: 'Bearer a',
        'proxy-authorization': 'Basic b',
        cookie: 'c=1',
        'set-cookie': ['d=2'],
        'x-api-key': 'e',
        'api-key': 'f',
        'x-goog-api-key': 'g',
        'x-auth-token': 'h',
        'x-client-secret': 'i',
        'content-type': 'application/json',
        'x-request-id': 'r-1',
      }),
    ).toEqual({
      authorization: REDACTED,
      'proxy-authorization': REDACTED,
      cookie: REDACTED,
      'set-cookie': REDACTED,
      'x-api-key': REDACTED,
      'api-key': REDACTED,
      'x-goog-api-key': REDACTED,
      'x-auth-token': REDACTED,
      'x-client-secret': REDACTED,
      'content-type': 'application/json',
      'x-request-id': 'r-1',
    });
  });

  it('accepts no headers', () => {
    expect(redactHeaders(undefined)).toEqual({});
  });
});

describe('defaultLogLevel', () => {
  const config = (auth?: { debugMode?: boolean }) => ({ auth }) as unknown as Parameters<typeof defaultLogLevel>[0];

  it('is debug when the AuthModule logs its decisions, else info', () => {
    expect(defaultLogLevel(config({ debugMode: true }), {})).toBe('debug');
    expect(defaultLogLevel(config({ debugMode: false }), { NODE_ENV: 'development' })).toBe('info');
    expect(defaultLogLevel(config({}), { NODE_ENV: 'development' })).toBe('debug');
    expect(defaultLogLevel(config({}), {})).toBe('info');
    expect(defaultLogLevel(config(undefined), { NODE_ENV: 'development' })).toBe('info');
  });
});
