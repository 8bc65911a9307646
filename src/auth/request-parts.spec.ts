import { firstHeaderValue, normalizePath, requestHost, requestPathOf } from './request-parts';

describe('requestPathOf', () => {
  it('drops the query and fragment', () => {
    expect(requestPathOf('/a/b?x=1#f')).toBe('/a/b');
    expect(requestPathOf('/a/b#f?x')).toBe('/a/b');
    expect(requestPathOf('/a/b')).toBe('/a/b');
  });
});

describe('normalizePath', () => {
  it('decodes escaped unreserved characters only', () => {
    expect(normalizePath('/api/v1/%61cme/x')).toBe('/api/v1/acme/x');
    expect(normalizePath('/a%2Fb')).toBe('/a%2Fb');
    expect(normalizePath('/a%7Eb%2d')).toBe('/a~b-');
  });

  it('collapses repeated slashes', () => {
    expect(normalizePath('//api///v1/acme//x')).toBe('/api/v1/acme/x');
  });

  it('refuses dot segments, also when escaped', () => {
    expect(normalizePath('/api/v1/acme/../other/x')).toBeUndefined();
    expect(normalizePath('/api/./x')).toBeUndefined();
    expect(normalizePath('/api/%2e%2E/x')).toBeUndefined();
    expect(normalizePath('/api/v1.2/file.json')).toBe('/api/v1.2/file.json');
  });
});

describe('requestHost', () => {
  it('reads Host lower-cased and ignores X-Forwarded-Host unless the proxy is trusted', () => {
    const headers = { host: 'Acme.Example.com:8080', 'x-forwarded-host': 'evil.example.com, proxy' };
    expect(requestHost(headers, false)).toBe('acme.example.com:8080');
    expect(requestHost(headers, true)).toBe('evil.example.com');
    expect(requestHost({}, true)).toBe('');
  });

  it('takes the first of repeated headers', () => {
    expect(firstHeaderValue(['a.example.com', 'b.example.com'])).toBe('a.example.com');
    expect(firstHeaderValue(' , x')).toBeUndefined();
  });
});
