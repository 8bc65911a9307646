import { truncateUtf8, utf8Length } from './utf8-truncate';

describe('truncateUtf8', () => {
  it('keeps text that fits', () => {
    expect(truncateUtf8('héllo', 6)).toBe('héllo');
  });

  it('never splits a two-, three- or four-byte character', () => {
    const text = 'aé€😀b';
    // Bytes: a(1) é(2) €(3) 😀(4) b(1)
    expect(truncateUtf8(text, 1)).toBe('a');
    expect(truncateUtf8(text, 2)).toBe('a');
    expect(truncateUtf8(text, 3)).toBe('aé');
    expect(truncateUtf8(text, 5)).toBe('aé');
    expect(truncateUtf8(text, 6)).toBe('aé€');
    expect(truncateUtf8(text, 9)).toBe('aé€');
    expect(truncateUtf8(text, 10)).toBe('aé€😀');
    expect(truncateUtf8(text, 0)).toBe('');
  });

  it('results never contain a replacement character and always fit', () => {
    const text = '日本語のテキスト😀🎉'.repeat(20);
    for (let max = 0; max < utf8Length(text); max += 1) {
      const cut = truncateUtf8(text, max);
      expect(utf8Length(cut)).toBeLessThanOrEqual(max);
      expect(cut).not.toContain('\uFFFD');
      expect(text.startsWith(cut)).toBe(true);
      expect(max - utf8Length(cut)).toBeLessThan(4);
    }
  });
});
