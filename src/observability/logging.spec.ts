import { REDACTED, redactHeaders } from './logging';

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
