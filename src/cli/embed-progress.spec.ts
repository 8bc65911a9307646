import { PassThrough } from 'node:stream';
import { lineProgress, terminalProgress } from './embed-progress';

const counts = (handled: number) => ({ handled, embedded: handled, alreadyStored: 0, bad: 0, failed: 0 });

describe('lineProgress', () => {
  it('prints at most one line per interval and always the last state', () => {
    const lines: string[] = [];
    let clock = 0;
    const progress = lineProgress(10, (text) => lines.push(text), 1000, () => clock);
    progress.update(counts(1));
    clock = 500;
    progress.update(counts(2));
    clock = 1500;
    progress.update(counts(3));
    progress.update(counts(4));
    progress.message('tollgate: corpus.jsonl:5: text must be a non-empty string (skipped)');
    progress.stop();
    expect(lines).toEqual([
      'progress: 1/10 lines (10%), embedded 1, already stored 0, bad 0, failed 0\n',
      'progress: 3/10 lines (30%), embedded 3, already stored 0, bad 0, failed 0\n',
      'tollgate: corpus.jsonl:5: text must be a non-empty string (skipped)\n',
      'progress: 4/10 lines (40%), embedded 4, already stored 0, bad 0, failed 0\n',
    ]);
  });

  it('prints the completed state at once', () => {
    const lines: string[] = [];
    const progress = lineProgress(2, (text) => lines.push(text), 60_000, () => 0);
    progress.update(counts(1));
    progress.update(counts(2));
    progress.stop();
    expect(lines[lines.length - 1]).toBe('progress: 2/2 lines (100%), embedded 2, already stored 0, bad 0, failed 0\n');
    expect(lines).toHaveLength(2);
  });
});

describe('terminalProgress', () => {
  it('draws a bar on a terminal and prints messages above it', () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 200, cursorTo: () => true, clearLine: () => true, moveCursor: () => true });
    let output = '';
    stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const progress = terminalProgress(4, stream as unknown as NodeJS.WriteStream);
    progress.update({ handled: 4, embedded: 3, alreadyStored: 0, bad: 1, failed: 0 });
    progress.message('tollgate: corpus.jsonl:2: not valid JSON (skipped)');
    progress.stop();
    expect(output).toContain('tollgate: corpus.jsonl:2: not valid JSON (skipped)\n');
    expect(output).toContain('4/4 lines | embedded 3 | already stored 0 | bad 1 | failed 0');
    expect(output).toContain('100%');
  });
});
