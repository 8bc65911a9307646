import { AuthenticationError, RateLimitError } from '../errors';
import { type EmbeddedRecord, type EmbeddingSink, embedCorpus } from './bulk-embedder';

class MemorySink implements EmbeddingSink {
  readonly records: EmbeddedRecord[] = [];
  constructor(private readonly stored: string[] = []) {}
  async storedIds(ids: readonly string[]): Promise<Set<string>> {
    return new Set(ids.filter((id) => this.stored.includes(id)));
  }
  async write(records: readonly EmbeddedRecord[]): Promise<void> {
    this.records.push(...records);
  }
}

async function* linesOf(lines: string[]): AsyncIterable<string> {
  for (const line of lines) yield line;
}

const corpus = (count: number) => Array.from({ length: count }, (_, index) => JSON.stringify({ id: `id-${index}`, text: `text ${index}` }));
const target = { provider: 'p', model: 'm' };

describe('embedCorpus', () => {
  it('never has more than `concurrency` batches in flight, and embeds every record once', async () => {
    let inFlight = 0;
    let peak = 0;
    const calls: string[][] = [];
    const sink = new MemorySink();
    const summary = await embedCorpus({
      lines: linesOf(corpus(23)),
      embed: async (texts) => {
        calls.push(texts);
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight -= 1;
        return { embeddings: texts.map((text) => [text.length]), provider: 'p', model: 'm' };
      },
      sink,
      target,
      batchSize: 4,
      concurrency: 3,
    });
    expect(peak).toBe(3);
    expect(calls.map((texts) => texts.length)).toEqual([4, 4, 4, 4, 4, 3]);
    expect(sink.records.map((record) => record.id).sort()).toEqual(corpus(23).map((line) => JSON.parse(line).id).sort());
    expect(summary).toMatchObject({ handled: 23, embedded: 23, alreadyStored: 0, bad: 0, failed: 0, provider: 'p', model: 'm', dimensions: 1 });
  });

  it('skips stored ids without calling the provider for a batch that is all stored', async () => {
    const calls: string[][] = [];
    const summary = await embedCorpus({
      lines: linesOf(corpus(4)),
      embed: async (texts) => {
        calls.push(texts);
        return { embeddings: texts.map(() => [1]), provider: 'p', model: 'm' };
      },
      sink: new MemorySink(['id-0', 'id-1', 'id-3']),
      target,
      batchSize: 2,
      concurrency: 1,
    });
    expect(calls).toEqual([['text 2']]);
    expect(summary).toMatchObject({ handled: 4, embedded: 1, alreadyStored: 3 });
  });

  it('reports a transient failure per batch and goes on; a lasting one stops reading', async () => {
    let call = 0;
    const failures: number[][] = [];
    const transient = await embedCorpus({
      lines: linesOf(corpus(6)),
      embed: async (texts) => {
        call += 1;
        if (call === 1) throw new RateLimitError('p: rate limited');
        return { embeddings: texts.map(() => [1]), provider: 'p', model: 'm' };
      },
      sink: new MemorySink(),
      target,
      batchSize: 2,
      concurrency: 1,
      onFailure: (failed) => failures.push(failed.map(({ line }) => line)),
    });
    expect(failures).toEqual([[1, 2]]);
    expect(transient).toMatchObject({ handled: 6, embedded: 4, failed: 2 });
    expect(transient.abortedBy).toBeUndefined();

    let calls = 0;
    const lasting = await embedCorpus({
      lines: linesOf(corpus(100)),
      embed: async () => {
        calls += 1;
        throw new AuthenticationError('p: the provider refused the API key');
      },
      sink: new MemorySink(),
      target,
      batchSize: 2,
      concurrency: 1,
    });
    expect(calls).toBe(1);
    expect(lasting.abortedBy).toBe('provider_authentication: p: the provider refused the API key');
    expect(lasting.handled).toBeLessThan(10);
  });
});
