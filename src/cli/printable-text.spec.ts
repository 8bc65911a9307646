import { csvCell, printable } from './printable-text';

describe('printable', () => {
  it('writes control characters as escapes: ESC and OSC-8 sequences, newlines, BEL, DEL, C1 and bidi controls', () => {
    expect(printable('\u001b[2J\u001b]8;;https://evil.example\u0007gpt-4o\u001b]8;;\u0007')).toBe(
      '\\x1b[2J\\x1b]8;;https://evil.example\\x07gpt-4o\\x1b]8;;\\x07',
    );
    expect(printable('a\nforged row\r\tx\u007f\u009b')).toBe('a\\x0aforged row\\x0d\\x09x\\x7f\\x9b');
    expect(printable('abc\u202edcba\u2066')).toBe('abc\\u202edcba\\u2066');
  });

  it('leaves ordinary text, accents and non-Latin scripts alone', () => {
    expect(printable('openai/gpt-4o')).toBe('openai/gpt-4o');
    expect(printable('modèle 模型 🤖')).toBe('modèle 模型 🤖');
  });
});

describe('csvCell', () => {
  it.each([
    ['=HYPERLINK("https://evil.example","click")', `"'=HYPERLINK(""https://evil.example"",""click"")"`],
    ['+1+cmd', `"'+1+cmd"`],
    ['-2+3', `"'-2+3"`],
    ['@SUM(A1)', `"'@SUM(A1)"`],
    ['\t=1', `"'\\x09=1"`],
    ['\r=1', `"'\\x0d=1"`],
  ])('neutralises a formula start (OWASP): %j', (cell, expected) => {
    expect(csvCell(cell)).toBe(expected);
  });

  it('escapes line breaks instead of quoting them, so no cell forges a row; quotes commas and quotes (RFC 4180)', () => {
    expect(csvCell('gpt\r\nt-2,999')).toBe('"gpt\\x0d\\x0at-2,999"');
    expect(csvCell('my, "local" model')).toBe('"my, ""local"" model"');
    expect(csvCell('openai/gpt-4o')).toBe('openai/gpt-4o');
    expect(csvCell('0.00625')).toBe('0.00625');
  });
});
