import { InvalidResponseError } from '../common/errors';
import { parseEventObject, readLines, readNdjson, readSseEventBatches, readSseEvents } from './stream-framing';

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

async function* chunks(...parts: Array<string | Buffer>): AsyncGenerator<Buffer> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

describe('stream readers', () => {
  it('splits LF and CRLF lines across chunk boundaries and multi-byte characters', async () => {
    const euro = Buffer.from('€');
    const lines = await collect(readLines(chunks('a\r', '\nb', Buffer.concat([Buffer.from('c'), euro.subarray(0, 1)]), euro.subarray(1), '\nlast')));
    expect(lines).toEqual(['a', 'bc€', 'last']);
  });

  it('frames server-sent events: multi-line data, comments, event names, unterminated tail', async () => {
    const events = await collect(
      readSseEvents(chunks(': keep-alive\n\n', 'event: delta\ndata: {"a":', '1}\n\n', 'data: one\ndata: two\n\n', 'data: [DONE]')),
    );
    expect(events).toEqual([
      { event: 'delta', data: '{"a":1}' },
      { event: undefined, data: 'one\ntwo' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('hands the events over in batches, one per read that completed any, framed as readSseEvents frames them', async () => {
    const parts = [': keep-alive\r\n\r', '\nevent: delta\ndata: {"a":', '1}\n\nevent: ping\ndata: {}\n\ndata: one\n', 'data: two\n\n', 'data: [DONE]'];
    const batches = await collect(readSseEventBatches(chunks(...parts)));
    expect(batches).toEqual([
      [
        { event: 'delta', data: '{"a":1}' },
        { event: 'ping', data: '{}' },
      ],
      [{ event: undefined, data: 'one\ntwo' }],
      [{ event: undefined, data: '[DONE]' }],
    ]);
    expect(batches.flat()).toEqual(await collect(readSseEvents(chunks(...parts))));
  });

  it('refuses a line that never ends instead of buffering it', async () => {
    const endless = (async function* () {
      for (let i = 0; i < 20; i++) yield Buffer.alloc(100 * 1024, 'a');
    })();
    await expect(collect(readLines(endless, 'p'))).rejects.toThrow('p: upstream stream line exceeded 1048576 characters');
  });

  it('parses NDJSON and rejects a malformed line as InvalidResponseError', async () => {
    expect(await collect(readNdjson(chunks('{"a":1}\n\n{"b"', ':2}\n'), 'p'))).toEqual([{ a: 1 }, { b: 2 }]);
    await expect(collect(readNdjson(chunks('{"a":1}\nnot json\n'), 'p'))).rejects.toThrow(InvalidResponseError);
  });
});

describe('parseEventObject', () => {
  it('returns the JSON object of an event', () => {
    expect(parseEventObject('{"type":"ping","n":1}', 'p')).toEqual({ type: 'ping', n: 1 });
  });

  it('refuses anything but an object, without the parser message', () => {
    for (const data of ['[1]', '"text"', 'null', '{"a": SECRET']) {
      expect(() => parseEventObject(data, 'p')).toThrow(InvalidResponseError);
      expect(() => parseEventObject(data, 'p')).toThrow(/^p: upstream sent a malformed stream event$/);
    }
  });
});
