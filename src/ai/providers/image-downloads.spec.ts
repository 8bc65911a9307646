import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction, Socket } from 'node:net';
import { InvalidRequestError } from '../errors';
import type { ChatMessage } from './ai-provider.interface';
import { ImageDownloader, type ImageDownloadLimits } from './image-downloads';
import * as imageFetch from './image-fetch';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** A user message holding one image part per URL. */
const withImages = (urls: readonly string[]): ChatMessage[] => [
  { role: 'user', content: [{ type: 'text', text: 'What is this?' }, ...urls.map((url) => ({ type: 'image' as const, image: { kind: 'url' as const, url } }))] },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until it answers `expected` or `ms` pass; answers the last value read. */
async function settlesTo<T>(read: () => T, expected: T, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  while (read() !== expected && Date.now() < end) await sleep(20);
  return read();
}

describe('ImageDownloader', () => {
  let server: Server;
  let port: number;
  let routes: Record<string, Route>;
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let running = 0;
  let peak = 0;
  const downloaders: ImageDownloader[] = [];

  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const downloader = (limits: Partial<ImageDownloadLimits>) => {
    const created = new ImageDownloader(limits, { allowPrivateNetwork: true });
    downloaders.push(created);
    return created;
  };
  const refusal = async (promise: Promise<unknown>): Promise<InvalidRequestError> => {
    const error = await promise.then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidRequestError);
    return error as InvalidRequestError;
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      running++;
      peak = Math.max(peak, running);
      res.on('close', () => running--);
      const route = routes[req.url ?? ''];
      if (route) return route(req, res);
      res.writeHead(404).end();
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await Promise.all(downloaders.map((created) => created.close()));
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    requests.length = 0;
    peak = 0;
    routes = {
      '/cat.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG),
      // Headers and a first chunk, then nothing: a download that would run forever.
      '/slow.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).write(PNG),
      // Accepts the connection and never answers.
      '/silent.png': () => undefined,
      '/late-missing.png': (_req, res) => setTimeout(() => res.writeHead(404).end(), 300),
      '/delayed.png': (_req, res) => setTimeout(() => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG), 150),
      '/400k.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(400 * 1024)),
    };
  });

  it('replaces every image URL with its bytes, in place, and leaves other parts and messages as they are', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      ...withImages([url('/cat.png'), url('/delayed.png')]),
      { role: 'user', content: [{ type: 'image', image: { kind: 'base64', mediaType: 'image/gif', data: 'R0lGODlh' } }] },
    ];
    const inlined = await downloader({}).inline(messages);
    const png = { kind: 'base64', mediaType: 'image/png', data: PNG.toString('base64') };
    expect(inlined).toEqual([
      messages[0],
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: png }, { type: 'image', image: png }] },
      messages[2],
    ]);
  });

  it('refuses a request over max_per_request, naming the limit, before any download', async () => {
    const error = await refusal(downloader({ maxPerRequest: 3 }).inline(withImages(Array.from({ length: 4 }, () => url('/cat.png')))));
    expect(error.message).toBe('the request gives 4 image URLs; at most 3 are downloaded per request (ai.images.max_per_request)');
    expect(requests).toEqual([]);
  });

  it('ends every other download of the request when one fails, before it answers', async () => {
    const urls = [url('/slow.png'), url('/slow.png'), url('/late-missing.png'), url('/slow.png'), url('/slow.png')];
    const error = await refusal(downloader({ maxConcurrentPerRequest: 5 }).inline(withImages(urls)));
    expect(error.message).toBe(`image at 127.0.0.1:${port}: answered HTTP 404`);
    expect(requests.filter((path) => path === '/slow.png')).toHaveLength(4);
    expect(await settlesTo(() => sockets.size, 0)).toBe(0);
  });

  it('ends the downloads when the caller goes away', async () => {
    const caller = new AbortController();
    const pending = downloader({}).inline(withImages([url('/slow.png'), url('/slow.png')]), caller.signal);
    expect(await settlesTo(() => sockets.size, 2)).toBe(2);
    caller.abort();
    expect((await refusal(pending)).message).toBe('image downloads stopped: the request was cancelled');
    expect(await settlesTo(() => sockets.size, 0)).toBe(0);
  });

  it('ends a download to a host that never answers at its deadline, naming it', async () => {
    const started = Date.now();
    const error = await refusal(downloader({ timeoutMs: 300 }).inline(withImages([url('/silent.png')])));
    expect(error.message).toBe(`image at 127.0.0.1:${port}: did not download within 0.3 s (ai.images.timeout)`);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await settlesTo(() => sockets.size, 0)).toBe(0);
  });

  it('ends a download whose body stalls at its deadline', async () => {
    const error = await refusal(downloader({ timeoutMs: 300 }).inline(withImages([url('/slow.png')])));
    expect(error.message).toBe(`image at 127.0.0.1:${port}: did not download within 0.3 s (ai.images.timeout)`);
  });

  it('refuses images past max_total_bytes together, each within max_bytes', async () => {
    const images = downloader({ maxBytes: 500 * 1024, maxTotalBytes: 1000 * 1024, maxConcurrentPerRequest: 1 });
    await expect(images.inline(withImages([url('/400k.png'), url('/400k.png')]))).resolves.toHaveLength(1);
    const error = await refusal(images.inline(withImages([url('/400k.png'), url('/400k.png'), url('/400k.png')])));
    expect(error.message).toBe(`image at 127.0.0.1:${port}: brings the request's images past ${1000 * 1024} bytes together (ai.images.max_total_bytes)`);
  });

  it('runs at most max_concurrent_per_request downloads of one request at once', async () => {
    await downloader({ maxConcurrentPerRequest: 2 }).inline(withImages(Array.from({ length: 6 }, () => url('/delayed.png'))));
    expect(requests).toHaveLength(6);
    expect(peak).toBe(2);
  });

  it('runs at most max_concurrent downloads of the process at once, over all requests', async () => {
    const images = downloader({ maxConcurrent: 3, maxConcurrentPerRequest: 4 });
    const requestOf = () => images.inline(withImages(Array.from({ length: 4 }, () => url('/delayed.png'))));
    await Promise.all([requestOf(), requestOf(), requestOf()]);
    expect(requests).toHaveLength(12);
    expect(peak).toBe(3);
  });

  it('gives a waiting download its slot back when its request ends first', async () => {
    const images = downloader({ maxConcurrent: 1, timeoutMs: 5000 });
    const holder = new AbortController();
    const holding = images.inline(withImages([url('/slow.png')]), holder.signal).catch(() => undefined);
    await settlesTo(() => requests.length, 1);
    const waiter = new AbortController();
    const waiting = images.inline(withImages([url('/cat.png')]), waiter.signal);
    waiter.abort();
    await refusal(waiting);
    holder.abort();
    await holding;
    await expect(images.inline(withImages([url('/cat.png')]))).resolves.toHaveLength(1);
    expect(requests).toEqual(['/slow.png', '/cat.png']);
  });

  it('hands over to a fresh agent after originsPerAgent distinct origins and closes the old one, which would keep every origin it served', async () => {
    const created: Array<{ closed: boolean }> = [];
    const createImageAgent = imageFetch.createImageAgent;
    const spy = jest.spyOn(imageFetch, 'createImageAgent').mockImplementation((options) => {
      const agent = createImageAgent(options);
      created.push(agent);
      return agent;
    });
    try {
      // Every name is the local server, each its own origin.
      const lookup = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
        options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)) as LookupFunction;
      const images = new ImageDownloader({}, { lookup, originsPerAgent: 2 });
      downloaders.push(images);
      for (const host of ['a.test', 'b.test', 'a.test', 'c.test']) {
        await images.inline(withImages([`http://${host}:${port}/cat.png`]));
      }
      expect(created).toHaveLength(2);
      expect(await settlesTo(() => created[0].closed, true)).toBe(true);
      expect(created[1].closed).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });

  it('ends running downloads when closed', async () => {
    const images = downloader({});
    const pending = images.inline(withImages([url('/slow.png')]));
    expect(await settlesTo(() => sockets.size, 1)).toBe(1);
    await images.close();
    await refusal(pending);
    expect(await settlesTo(() => sockets.size, 0)).toBe(0);
  });
});
