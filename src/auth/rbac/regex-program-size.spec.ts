import { regexProgramSize } from './regex-program-size';

describe('regexProgramSize', () => {
  it.each([
    ['abc', 3],
    ['a*', 3],
    ['a+b?', 4],
    ['a|bc', 4],
    ['(ab)', 4],
    ['(?:ab|c){3}', 3 * (2 + 4)],
    ['a{2,5}', 5 + 3],
    ['a{4,}', 1 + 4],
    ['a{0,}', 3],
    ['[a-z{}]{10}', 10],
    ['[]a]{10}', 10],
    ['[[:alpha:]]{10}', 10],
    ['\\p{Greek}{10}', 10],
    ['\\x{41}\\pL\\d', 3],
    ['\\Qa{99}\\E', 5],
    ['(?i)a{3}', 2 + 3],
    ['(?P<name>a{3})', 2 + 3],
    ['((a{10}){10}){10}', 10 * (2 + 10 * (2 + 10))],
    ['a{', 2],
    ['(a', 3],
  ])('%p is %p', (source, size) => {
    expect(regexProgramSize(source)).toBe(size);
  });

  it('multiplies nested counted repeats, however they are written', () => {
    expect(regexProgramSize('(?:(?:\\p{L}{1000}){1000}){1000}')).toBeGreaterThan(1e9);
    expect(regexProgramSize('\\p{L}{1000}'.repeat(46))).toBe(46_000);
  });
});
