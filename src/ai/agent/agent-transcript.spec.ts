import { renderTranscript } from './agent-transcript';
import { utf8Length } from './utf8-truncate';

const turn = (n: number) => ({ action: `{"action":"t","args":{"n":${n}}}`, observation: `{"tool":"t","ok":true,"result":"${'x'.repeat(100)}"}` });

describe('renderTranscript', () => {
  it('keeps every turn when they fit', () => {
    const text = renderTranscript('find it', [turn(1), turn(2)], 10_000, 'Next turn:');
    expect(text).toContain('Task:\nfind it');
    expect(text).toContain('"n":1');
    expect(text).toContain('"n":2');
    expect(text).not.toContain('omitted');
    expect(text.endsWith('Next turn:')).toBe(true);
  });

  it('drops the oldest turns behind one marker, deterministically, within the limit', () => {
    const turns = [1, 2, 3, 4, 5].map(turn);
    const text = renderTranscript('find it', turns, 420, 'Next turn:');
    expect(utf8Length(text)).toBeLessThanOrEqual(420);
    expect(text).toContain('Task:\nfind it');
    expect(text).toMatch(/\[\d earlier tool turns omitted to fit the context limit\]/);
    expect(text).toContain('"n":5');
    expect(text).not.toContain('"n":1');
    expect(renderTranscript('find it', turns, 420, 'Next turn:')).toBe(text);
  });
});
