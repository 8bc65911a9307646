import { normalizePath, requestPathOf } from './request-parts';
import { checkPathnameSlug, checkSubdomain, checkTenantHeader, slugOf, subdomainOf } from './tenant-checks';

const PATTERN = /^\/api\/v1\/([^/]+)\//;

describe('subdomainOf', () => {
  it.each([
    ['acme.example.com', 'acme'],
    ['ACME.Example.com:8443', 'acme'],
    ['a.b.example.co.uk', 'a'],
    ['acme.example.com.', 'acme'],
  ])('%s -> %s', (host, expected) => {
    expect(subdomainOf(host)).toBe(expected);
  });

  it.each(['example.com', 'localhost', 'localhost:3000', '127.0.0.1', '10.0.0.1:80', '[::1]:3000', '', '.example.com'])(
    '%s has none',
    (host) => {
      expect(subdomainOf(host)).toBeUndefined();
    },
  );
});

describe('checkSubdomain', () => {
  it('passes a case-insensitive match', () => {
    expect(checkSubdomain('Acme', 'acme.example.com')).toBeUndefined();
  });

  it('fails another subdomain, a missing claim and a host without subdomain, without naming the claim value', () => {
    const other = checkSubdomain('globex', 'acme.example.com');
    expect(other).toEqual({ code: 'subdomain_mismatch', detail: expect.not.stringContaining('globex') });
    expect(checkSubdomain(undefined, 'acme.example.com')?.code).toBe('subdomain_mismatch');
    expect(checkSubdomain('acme', 'example.com')?.code).toBe('subdomain_mismatch');
  });
});

describe('slugOf / checkPathnameSlug', () => {
  // The guard hands the checks the normalised path.
  const path = (url: string): string => normalizePath(requestPathOf(url)) as string;

  it('takes the first capture group of the normalised path', () => {
    expect(slugOf(path('/api/v1/north/sales?x=1'), PATTERN)).toBe('north');
    expect(slugOf(path('//api//v1/%6eorth/sales'), PATTERN)).toBe('north');
    expect(slugOf(path('/other/path'), PATTERN)).toBeUndefined();
  });

  it('allows listed slugs case-insensitively and passes paths without a slug', () => {
    expect(checkPathnameSlug(new Set(['north']), path('/api/v1/NORTH/x'), PATTERN)).toBeUndefined();
    expect(checkPathnameSlug(new Set(['north']), path('/api/v1/%4eORTH/x'), PATTERN)).toBeUndefined();
    expect(checkPathnameSlug(new Set(), path('/health'), PATTERN)).toBeUndefined();
  });

  it('denies unlisted slugs, escaped or not', () => {
    expect(checkPathnameSlug(new Set(['north']), path('/api/v1/south/x'), PATTERN)?.code).toBe('slug_denied');
    expect(checkPathnameSlug(new Set(['north']), path('/api/v1/%73outh/x'), PATTERN)?.code).toBe('slug_denied');
    expect(checkPathnameSlug(new Set(['north']), path('/api/v1/north%3Bx/x'), PATTERN)?.code).toBe('slug_denied');
  });

  it('is not fooled by a global pattern keeping lastIndex', () => {
    const global = /^\/api\/v1\/([^/]+)\//g;
    expect(slugOf('/api/v1/north/x', global)).toBe('north');
    expect(slugOf('/api/v1/north/x', global)).toBe('north');
  });
});
