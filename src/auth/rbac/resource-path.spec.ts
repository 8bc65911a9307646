import { deriveResourcePath } from './resource-path';

const DEFAULT = /^\/api\/v1\/([^/]+)\//;

describe('deriveResourcePath', () => {
  it.each([
    ['/api/v1/acme/sales/invoices', 'sales/invoices'],
    ['/api/v1/acme/sales/invoices/?page=2', 'sales/invoices'],
    ['/api/v1/acme/', ''],
    // The pattern needs a slash after the slug; then the version prefix is stripped.
    ['/api/v1/acme', 'acme'],
    ['/api/v2/reports/daily', 'reports/daily'],
    ['/api/v10/reports', 'reports'],
    ['/api/reports', 'reports'],
    ['/reports/', 'reports'],
    ['/', ''],
  ])('%s -> %p', (url, expected) => {
    expect(deriveResourcePath(url, DEFAULT)).toBe(expected);
  });

  it('removes whatever part a custom pattern matches', () => {
    expect(deriveResourcePath('/t/acme/x/y', /^\/t\/([^/]+)\//)).toBe('x/y');
    expect(deriveResourcePath('/x/acme-tenant/y', /acme-tenant\//)).toBe('x/y');
  });

  it('is not fooled by a global pattern keeping lastIndex', () => {
    const global = /^\/api\/v1\/([^/]+)\//g;
    expect(deriveResourcePath('/api/v1/acme/a', global)).toBe('a');
    expect(deriveResourcePath('/api/v1/acme/b', global)).toBe('b');
  });

  it('normalizes escaped unreserved characters and repeated slashes', () => {
    expect(deriveResourcePath('/api/v1/acme/%61dmin', DEFAULT)).toBe('admin');
    expect(deriveResourcePath('/api/v1/acme//sales///invoices', DEFAULT)).toBe('sales/invoices');
    expect(deriveResourcePath('/api/v1/acme/a%252Fb', DEFAULT)).toBe('a%252Fb');
  });

  it('refuses dot segments, written plainly or escaped', () => {
    expect(deriveResourcePath('/api/v1/acme/reports/../admin', DEFAULT)).toBeUndefined();
    expect(deriveResourcePath('/api/v1/acme/reports/%2e%2e/admin', DEFAULT)).toBeUndefined();
    expect(deriveResourcePath('/api/v1/acme/./admin', DEFAULT)).toBeUndefined();
    expect(deriveResourcePath('/api/v1/acme/v1.2/report.pdf', DEFAULT)).toBe('v1.2/report.pdf');
  });

  it('refuses a path the router would split differently: files/public/..%2Fsecret is not under files/public', () => {
    for (const url of ['/api/v1/acme/files/public/..%2Fsecret', '/api/v1/acme/files/public/%2E%2E%2Fsecret', '/api/v1/acme/files/public/..%5Csecret']) {
      expect([url, deriveResourcePath(url, DEFAULT)]).toEqual([url, undefined]);
    }
  });
});
