import { compileSkipPaths } from './skip-paths';

describe('compileSkipPaths', () => {
  const skip = compileSkipPaths(['/health', '/public/*', '%r{^/docs(/.*)?$}', /^\/static\/[a-z]+\.css$/g]);

  it.each(['/health', '/health/', '/health?probe=1', '/public', '/public/a/b', '/docs', '/docs/x', '/static/site.css'])(
    'skips %s',
    (url) => {
      expect(skip(url)).toBe(true);
    },
  );

  it.each(['/healthz', '/health/x', '/publicity', '/api/public/x', '/docsx', '/static/site.css.map', '/public/../admin', '/public/%2e%2e/admin'])(
    'does not skip %s',
    (url) => {
      expect(skip(url)).toBe(false);
    },
  );

  it('matches a global RegExp on every call (no lastIndex state)', () => {
    expect(skip('/static/a.css')).toBe(true);
    expect(skip('/static/a.css')).toBe(true);
  });

  it('skips nothing when the list is empty', () => {
    expect(compileSkipPaths([])('/')).toBe(false);
  });
});
