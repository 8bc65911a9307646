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

  it.each([
    ['IPv4-mapped, hex tail', '::ffff:7f00:1'],
    ['IPv4-mapped, written out', '0:0:0:0:0:ffff:7f00:1'],
    ['IPv4-mapped, written out with a dotted tail', '0000:0000:0000:0000:0000:FFFF:127.0.0.1'],
    ['IPv4-mapped, bracketed', '[::ffff:10.0.0.1]'],
    ['SIIT IPv4-translated (RFC 6145)', '::ffff:0:127.0.0.1'],
    ['IPv4-compatible (deprecated), dotted', '::127.0.0.1'],
    ['IPv4-compatible (deprecated), hex', '::7f00:1'],
    ['NAT64 well-known prefix, dotted', '64:ff9b::127.0.0.1'],
    ['NAT64 well-known prefix, hex', '64:ff9b::a9fe:a9fe'],
    ['NAT64 local-use prefix (RFC 8215)', '64:ff9b:1::808:808'],
    ['6to4 of 127.0.0.1', '2002:7f00:1::'],
    ['6to4 of 192.168.1.1', '2002:c0a8:101::1'],
    ['Teredo with a private server', '2001:0:a00:1::f7f7:f7f7'],
    ['Teredo with a loopback client (inverted bits)', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['site-local (deprecated)', 'fec0::1'],
    ['discard-only', '100::1'],
    ['documentation', '2001:db8::1'],
    ['documentation (RFC 9637)', '3fff::1'],
    ['outside global unicast', '4000::1'],
    ['link-local with a zone', 'fe80::1%eth0'],
    ['decimal IPv4', '2130706433'],
    ['hex IPv4', '0x7f.1'],
    ['octal IPv4', '0177.0.0.1'],
    ['benchmarking', '198.18.0.1'],
  ])('%s (%s) is not public', (_, address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each([
    ['IPv4-compatible of a public address, dotted', '::8.8.8.8'],
    ['IPv4-compatible of a public address, hex', '::808:808'],
    ['NAT64 of a public address', '64:ff9b::8.8.8.8'],
    ['6to4 of a public address', '2002:808:808::1'],
    ['Teredo with a public server and client', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    ['global unicast', '2a00:1450:4001:830::200e'],
  ])('%s (%s) is public', (_, address) => {
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

  it.each([
    'http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://0xa9.254.169.254/latest',
    'http://[::ffff:7f00:1]/', 'http://[0:0:0:0:0:ffff:7f00:1]/', 'http://[::127.0.0.1]/', 'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b::169.254.169.254]/latest', 'http://[2002:a9fe:a9fe::]/', 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:8080/',
  ])('refuses %s: the WHATWG URL parser normalises the host, and the guard reads the IPv4 inside', (url) => {
    expect(() => checkToolUrl(url, false, label)).toThrow(/loopback, private or link-local/);
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
