import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { InvalidRequestError } from '../errors';
import { publicOnlyLookup } from '../tools/tool-url-guard';
import type { Agent } from 'undici';
import { createImageAgent, DEFAULT_MAX_IMAGE_BYTES, fetchImageAsBase64, ImageDownloadStop, MAX_IMAGE_REDIRECTS } from './image-fetch';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

type Route = (req: IncomingMessage, res: ServerResponse) => void;

interface FetchOptions {
  maxBytes: number;
  allowPrivateNetwork?: boolean;
  lookup?: LookupFunction;
  signal?: AbortSignal;
  timeoutMs?: number;
}

describe('fetchImageAsBase64', () => {
  const agents: Agent[] = [];
  /** One download on a guarded agent of its own options (the downloader shares one agent; here each test states its guard). */
  const fetchImage = (url: string, { maxBytes, allowPrivateNetwork, lookup, signal, timeoutMs = 5000 }: FetchOptions) => {
    const agent = createImageAgent({ timeoutMs, allowPrivateNetwork, lookup });
    agents.push(agent);
    return fetchImageAsBase64(url, { dispatcherFor: () => agent, maxBytes, signal, allowPrivateNetwork });
  };
  let server: Server;
  let port: number;
  let routes: Record<string, Route>;
  const seen: string[] = [];

  /** `images.test` stands for a public host: it resolves to the local server; any other name goes through the real guard. */
  const lookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (hostname !== 'images.test') return (publicOnlyLookup as LookupFunction)(hostname, options, callback as never);
    return options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
  }) as LookupFunction;
  const local = (path: string) => `http://127.0.0.1:${port}${path}`;
  const viaName = (path: string) => `http://images.test:${port}${path}`;

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      const route = routes[req.url ?? ''];
      if (route) return route(req, res);
      res.writeHead(404).end('secret upstream body');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.destroy()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    seen.length = 0;
    routes = {
      '/cat.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length }).end(PNG),
      '/photo.jpg': (_req, res) => res.writeHead(200, { 'content-type': 'IMAGE/JPEG; charset=binary' }).end(PNG),
    };
  });

  const refusal = async (promise: Promise<unknown>): Promise<InvalidRequestError> => {
    const error = await promise.then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidRequestError);
    return error as InvalidRequestError;
  };

  it('returns the bytes as base64 with the media type from Content-Type', async () => {
    await expect(fetchImage(local('/cat.png'), { maxBytes: 1024, allowPrivateNetwork: true })).resolves.toEqual({
      mediaType: 'image/png',
      data: PNG.toString('base64'),
    });
    await expect(fetchImage(local('/photo.jpg'), { maxBytes: 1024, allowPrivateNetwork: true })).resolves.toMatchObject({ mediaType: 'image/jpeg' });
  });

  it('reaches a host name that resolves to a public address and follows a redirect through the guard', async () => {
    routes['/moved'] = (_req, res) => res.writeHead(302, { location: '/cat.png' }).end();
    await expect(fetchImage(viaName('/moved'), { maxBytes: 1024, lookup })).resolves.toMatchObject({ mediaType: 'image/png' });
    expect(seen).toEqual(['/moved', '/cat.png']);
  });

  it('refuses an image larger than the cap by its Content-Length, before reading it', async () => {
    const error = await refusal(fetchImage(local('/cat.png'), { maxBytes: PNG.length - 1, allowPrivateNetwork: true }));
    expect(error.message).toBe(`image at 127.0.0.1:${port}: is larger than ${PNG.length - 1} bytes (ai.images.max_bytes)`);
  });

  it('refuses an image larger than the cap by the bytes streamed when there is no Content-Length', async () => {
    let closed = false;
    routes['/endless.png'] = (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.on('close', () => (closed = true));
      const timer = setInterval(() => res.write(Buffer.alloc(16 * 1024)), 1);
      res.on('close', () => clearInterval(timer));
    };
    const error = await refusal(fetchImage(local('/endless.png'), { maxBytes: 100 * 1024, allowPrivateNetwork: true }));
    expect(error.message).toMatch(/is larger than 102400 bytes \(ai\.images\.max_bytes\)$/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(true);
  });

  it.each([
    ['a loopback literal', 'http://127.0.0.1/cat.png', 'image at 127.0.0.1: is a loopback, private or link-local address'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data', 'image at 169.254.169.254: is a loopback, private or link-local address'],
    ['an IPv4-mapped IPv6 loopback', 'http://[::ffff:7f00:1]/x.png', 'image at [::ffff:7f00:1]: is a loopback, private or link-local address'],
    ['localhost', 'http://localhost:9/x.png', 'image at localhost:9: is a loopback, private or link-local address'],
    ['a non-http scheme', 'file:///etc/passwd', 'image URL must be an http:// or https:// URL (or a data: URL)'],
    ['credentials in the URL', 'http://user:pw@example.org/x.png', 'image URL for example.org: must not contain credentials'],
    ['an invalid URL', 'not a url', 'image URL is not a valid URL'],
  ])('refuses %s without connecting', async (_name, url, message) => {
    expect((await refusal(fetchImage(url, { maxBytes: DEFAULT_MAX_IMAGE_BYTES }))).message).toBe(message);
    expect(seen).toEqual([]);
  });

  it('refuses a host name whose DNS answer is a private address', async () => {
    const resolvesToLoopback = ((_hostname: string, options: object, callback: never) =>
      (publicOnlyLookup as LookupFunction)('localhost', options, callback)) as LookupFunction;
    const error = await refusal(fetchImage(`http://internal.test:${port}/cat.png`, { maxBytes: 1024, lookup: resolvesToLoopback }));
    expect(error.message).toBe(`image at internal.test:${port}: resolves to a loopback, private or link-local address`);
    expect(seen).toEqual([]);
  });

  it('refuses a redirect to a private address without following it', async () => {
    routes['/to-metadata'] = (_req, res) => res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data' }).end();
    routes['/to-local'] = (_req, res) => res.writeHead(307, { location: local('/cat.png') }).end();
    const metadata = await refusal(fetchImage(viaName('/to-metadata'), { maxBytes: 1024, lookup }));
    expect(metadata.message).toBe('image at 169.254.169.254: is a loopback, private or link-local address');
    const loopback = await refusal(fetchImage(viaName('/to-local'), { maxBytes: 1024, lookup }));
    expect(loopback.message).toBe(`image at 127.0.0.1:${port}: is a loopback, private or link-local address`);
    expect(seen).toEqual(['/to-metadata', '/to-local']);
  });

  it(`refuses more than ${MAX_IMAGE_REDIRECTS} redirects and a redirect to another scheme`, async () => {
    routes['/loop'] = (_req, res) => res.writeHead(302, { location: '/loop' }).end();
    routes['/to-file'] = (_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    expect((await refusal(fetchImage(local('/loop'), { maxBytes: 1024, allowPrivateNetwork: true }))).message).toMatch(/redirects more than 5 times$/);
    expect(seen).toHaveLength(MAX_IMAGE_REDIRECTS + 1);
    expect((await refusal(fetchImage(local('/to-file'), { maxBytes: 1024, allowPrivateNetwork: true }))).message).toBe(
      `image at 127.0.0.1:${port}: redirects to a non-http(s) URL`,
    );
  });

  it.each([
    ['text/html', 'text/html'],
    ['image/svg+xml', 'image/svg+xml'],
    ['a missing Content-Type', undefined],
  ])('refuses %s', async (_name, contentType) => {
    routes['/thing'] = (_req, res) => res.writeHead(200, contentType ? { 'content-type': contentType } : {}).end('<svg/>');
    const error = await refusal(fetchImage(local('/thing'), { maxBytes: 1024, allowPrivateNetwork: true }));
    expect(error.message).toBe(
      `image at 127.0.0.1:${port}: is not an image of type image/jpeg, image/png, image/gif, image/webp (Content-Type ${contentType ?? 'missing or invalid'})`,
    );
  });

  it('names the status of an error answer and never its body', async () => {
    const error = await refusal(fetchImage(local('/missing.png'), { maxBytes: 1024, allowPrivateNetwork: true }));
    expect(error.message).toBe(`image at 127.0.0.1:${port}: answered HTTP 404`);
    expect(error.message).not.toContain('secret');
  });

  it('stops when the signal aborts, in the words of its reason', async () => {
    routes['/slow.png'] = (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(PNG);
    };
    const deadline = new AbortController();
    setTimeout(() => deadline.abort(new ImageDownloadStop('did not download within 0.1 s (ai.images.timeout)')), 100);
    const stopped = await refusal(fetchImage(local('/slow.png'), { maxBytes: 1024, allowPrivateNetwork: true, signal: deadline.signal }));
    expect(stopped.message).toBe(`image at 127.0.0.1:${port}: did not download within 0.1 s (ai.images.timeout)`);
    const cancelled = await refusal(fetchImage(local('/slow.png'), { maxBytes: 1024, allowPrivateNetwork: true, signal: AbortSignal.timeout(100) }));
    expect(cancelled.message).toBe(`image at 127.0.0.1:${port}: download was cancelled`);
  });

  it("ends at the agent's own timers when no signal does", async () => {
    routes['/silent.png'] = () => undefined;
    const error = await refusal(fetchImage(local('/silent.png'), { maxBytes: 1024, allowPrivateNetwork: true, timeoutMs: 200 }));
    expect(error.message).toBe(`image at 127.0.0.1:${port}: download did not finish in time`);
  });

  it('refuses a body that spends the allowance it shares with other downloads, naming the spender', async () => {
    const agent = createImageAgent({ timeoutMs: 5000, allowPrivateNetwork: true });
    agents.push(agent);
    let taken = 0;
    const takeBytes = (bytes: number) => ((taken += bytes) > 8 ? 'spends the allowance' : undefined);
    const error = await refusal(fetchImageAsBase64(local('/cat.png'), { dispatcherFor: () => agent, maxBytes: 1024, allowPrivateNetwork: true, takeBytes }));
    expect(error.message).toBe(`image at 127.0.0.1:${port}: spends the allowance`);
  });

  it('exports a 20 MB default cap', () => {
    expect(DEFAULT_MAX_IMAGE_BYTES).toBe(20 * 1024 * 1024);
  });
});
