import fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SseFormat, sseData, sseEvent, writeSse } from './sse-writer';

type Event = { text: string; last?: boolean } | { fail: Error };

/** A format spelling each event as its text; the last event adds `end`, a failure an `error` event. */
const format: SseFormat<Event> = {
  opening: () => sseEvent('open', {}),
  render: (event) => ('text' in event ? sseData(event.text) : ''),
  isLast: (event) => 'text' in event && event.last === true,
  closing: () => sseData('[CLOSED]'),
  failure: (error) => ({ frame: sseEvent('error', { message: (error as Error).message }), unexpected: false }),
};

async function* eventsOf(items: Event[]): AsyncGenerator<Event> {
  for (const item of items) {
    if ('fail' in item) throw item.fail;
    yield item;
  }
}

let app: FastifyInstance;
let route: (reply: FastifyReply) => AsyncIterable<Event>;
const finished: string[] = [];

beforeAll(async () => {
  app = fastify({ forceCloseConnections: true });
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('ratelimit-remaining', '4');
    done();
  });
  app.addHook('onResponse', (request, _reply, done) => {
    finished.push(request.url);
    done();
  });
  app.get('/stream', (request, reply) => writeSse(request, reply, route(reply), format));
  await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(() => app.close());

const port = () => (app.server.address() as AddressInfo).port;

/** Polls until `condition` holds; generous, since the test machine is shared. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('writeSse', () => {
  it('keeps the headers hooks set, writes the opening, the events and the last one, and runs onResponse hooks', async () => {
    route = () => eventsOf([{ text: 'a' }, { text: 'b' }, { text: 'end', last: true }, { text: 'never' }]);
    const response = await app.inject({ method: 'GET', url: '/stream' });
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'ratelimit-remaining': '4',
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-request-id': expect.any(String),
    });
    expect(response.body).toBe('event: open\ndata: {}\n\ndata: a\n\ndata: b\n\ndata: end\n\n');
    await until(() => finished.includes('/stream'), 'the onResponse hook');
  });

  it('ends with the closing frames when the events run out without a last one', async () => {
    route = () => eventsOf([{ text: 'a' }]);
    const response = await app.inject({ method: 'GET', url: '/stream' });
    expect(response.body).toBe('event: open\ndata: {}\n\ndata: a\n\ndata: [CLOSED]\n\n');
  });

  it('leaves a failure before the first event to the error handler: an ordinary error response, no stream', async () => {
    route = () => eventsOf([{ fail: new Error('refused') }]);
    const response = await app.inject({ method: 'GET', url: '/stream' });
    expect(response.statusCode).toBe(500);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });

  it('ends a stream that fails after the first byte with the format failure frame', async () => {
    route = () => eventsOf([{ text: 'a' }, { fail: new Error('upstream went away') }]);
    const response = await app.inject({ method: 'GET', url: '/stream' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('event: open\ndata: {}\n\ndata: a\n\nevent: error\ndata: {"message":"upstream went away"}\n\n');
  });

  it('waits for the client while it reads slower than the events come (back-pressure)', async () => {
    const frame = 'x'.repeat(256 * 1024);
    const count = 40;
    let largestBacklog = 0;
    let raw: FastifyReply['raw'] | undefined;
    route = (reply) =>
      (async function* () {
        raw = reply.raw;
        for (let i = 0; i < count; i++) {
          largestBacklog = Math.max(largestBacklog, reply.raw.writableLength);
          yield { text: frame };
        }
      })();
    const response = await new Promise<IncomingMessage>((resolve, reject) => httpRequest({ port: port(), path: '/stream' }, resolve).on('error', reject).end());
    response.pause();
    await until(() => raw?.writableNeedDrain === true, 'a full socket');
    let received = 0;
    response.on('data', (chunk: Buffer) => (received += chunk.length));
    response.resume();
    await new Promise((resolve) => response.on('end', resolve));
    const opening = sseEvent('open', {}).length;
    expect(received).toBe(opening + count * sseData(frame).length + sseData('[CLOSED]').length);
    // Without waiting for drain, the whole answer (10 MiB) would pile up in the response's buffer.
    expect(largestBacklog).toBeLessThanOrEqual(2 * sseData(frame).length);
  });

  it('stops pulling events and ends the source when the client goes away', async () => {
    let sourceEnded = false;
    let pulls = 0;
    route = () =>
      (async function* () {
        try {
          for (;;) {
            pulls++;
            yield { text: 'tick' };
            await new Promise((resolve) => setImmediate(resolve));
          }
        } finally {
          sourceEnded = true;
        }
      })();
    const response = await new Promise<IncomingMessage>((resolve, reject) => httpRequest({ port: port(), path: '/stream' }, resolve).on('error', reject).end());
    await new Promise((resolve) => response.once('data', resolve));
    response.destroy();
    await until(() => sourceEnded, 'the source to end');
    const pullsAtEnd = pulls;
    await new Promise((resolve) => setImmediate(resolve));
    expect(pulls).toBe(pullsAtEnd);
  });
});
