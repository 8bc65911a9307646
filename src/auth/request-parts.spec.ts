import {
  canonicalPathText, firstHeaderValue, normalizePath, requestHost, requestPathOf } from './request-parts';

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
    expect(normalizePath('/a%41b')).toBe('/aAb');
    expect(normalizePath('/a%7Eb%2d')).toBe('/a~b-');
  });

  it('collapses repeated slashes', () => {
    expect(normalizePath('//api///v1/acme//x')).toBe('/api/v1/acme/x');
  });

  it('refuses an absolute-form target, which the router routes on the path after the authority', () => {
    expect(normalizePath('http://x/api/v1/south/sales')).toBeUndefined();
    expect(normalizePath('HTTPS://x/api/v1/south/sales')).toBeUndefined();
    expect(normalizePath('*')).toBeUndefined();
    expect(normalizePath('/api/v1/south/sales')).toBe('/api/v1/south/sales');
  });

  it('refuses dot segments, also when escaped', () => {
    expect(normalizePath('/api/v1/acme/../other/x')).toBeUndefined();
    expect(normalizePath('/api/./x')).toBeUndefined();
    expect(normalizePath('/api/%2e%2E/x')).toBeUndefined();
    expect(normalizePath('/api/v1.2/file.json')).toBe('/api/v1.2/file.json');
  });

  it.each([
    '/files/public/..%2Fsecret',
    '/files/public/%2E%2E%2Fsecret',
    '/files/public/%2e%2E/secret',
    '/files/public/.%2e/secret',
    '/files/public/..%5Csecret',
    '/files/public/..%5csecret',
    '/files/public/..\\secret',
    '/files/a%2fb',
    '/files/public/..;x/secret',
    '/files/public/.;/secret',
  ])('refuses %s: the router would hand the handler other segments than the checks saw', (path) => {
    expect(normalizePath(path)).toBeUndefined();
  });

  it('leaves what the router decodes only once, and dots inside names', () => {
    expect(normalizePath('/files/public/..%252Fsecret')).toBe('/files/public/..%252Fsecret');
    expect(normalizePath('/files/a;b/..x/x..')).toBe('/files/a;b/..x/x..');
  });
});

describe('canonicalPathText', () => {
  it.each([
    ['docs/my file', 'docs/my%20file'],
    ['docs/café', 'docs/caf%C3%A9'],
    ['docs/caf%c3%a9', 'docs/caf%C3%A9'],
    ['docs/%7euser', 'docs/~user'],
    ['emoji/\u{1F600}', 'emoji/%F0%9F%98%80'],
    ["a-b.c_d~!$&'()*+,;=:@/x", "a-b.c_d~!$&'()*+,;=:@/x"],
  ])('%p is written %p, as a client sends it', (text, canonical) => {
    expect(canonicalPathText(text)).toBe(canonical);
    expect(normalizePath(`/${canonical}`)).toBe(`/${canonical}`);
  });

  it('normalizePath gives the same form for any case of escape', () => {
    expect(normalizePath('/docs/caf%c3%a9/my%20file')).toBe('/docs/caf%C3%A9/my%20file');
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
