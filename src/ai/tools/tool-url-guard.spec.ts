import { BLOCKED_ADDRESS_CODE, checkToolUrl, isNonPublicAddress, publicOnlyLookup } from './tool-url-guard';

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::5', 'fc00::1', '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe', '[::1]',
  ])('%s is not public', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', 'example.org'])('%s is public (or not an address)', (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });
});

describe('checkToolUrl', () => {
  const label = 'tools.web_search.url';

  it('accepts public http(s) URLs', () => {
    expect(checkToolUrl('https://search.example.org/searx', false, label).hostname).toBe('search.example.org');
    expect(checkToolUrl('http://93.184.216.34:8080', false, label).port).toBe('8080');
  });

  it('refuses other schemes, credentials and unparsable text, naming the setting but not the URL', () => {
    expect(() => checkToolUrl('ftp://example.org', false, label)).toThrow('tools.web_search.url: must be an http:// or https:// URL');
    expect(() => checkToolUrl('file:///etc/passwd', true, label)).toThrow('must be an http:// or https:// URL');
    expect(() => checkToolUrl('https://user:hunter2@example.org', true, label)).toThrow(/must not contain credentials/);
    expect(() => checkToolUrl('https://user:hunter2@example.org', true, label)).not.toThrow(/hunter2/);
    expect(() => checkToolUrl('not a url', false, label)).toThrow('tools.web_search.url: is not a valid URL');
  });

  it('refuses loopback, private and link-local hosts unless allowed', () => {
    for (const url of ['http://127.0.0.1:8888', 'http://localhost:8888', 'http://LOCALHOST.', 'http://a.localhost', 'http://10.0.0.5', 'http://[::1]:80', 'http://169.254.169.254/latest', 'http://[::ffff:127.0.0.1]']) {
      expect(() => checkToolUrl(url, false, label)).toThrow(/loopback, private or link-local.*allow_private_network: true/);
      expect(checkToolUrl(url, true, label)).toBeInstanceOf(URL);
    }
  });
});

describe('publicOnlyLookup', () => {
  const lookup = (hostname: string, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      publicOnlyLookup(hostname, { all }, (error, address) => resolve({ error, address })),
    );

  it('refuses a name that resolves to a loopback address, with the guard code', async () => {
    const { error } = await lookup('localhost', true);
    expect(error?.code).toBe(BLOCKED_ADDRESS_CODE);
  });

  it('passes resolution failures through unchanged', async () => {
    const { error } = await lookup('no-such-host.invalid', false);
    expect(error?.code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });
});
