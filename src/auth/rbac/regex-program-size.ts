/**
 * An upper bound of the program RE2 would compile from a pattern, read from the source before RE2 sees it.
 * RE2 bounds its program only at tens of thousands of instructions, and compiling one that large stalls the
 * event loop: `\p{L}{1000}` repeated 46 times (506 characters) takes ~0.6 s. Pure.
 *
 * Sizes follow RE2's own count (re2js Parser.calcSize): an atom is 1, `*` adds 2, `+` and `?` add 1, a counted
 * repeat `{n,m}` multiplies by m (by n when open) and adds m - n, alternatives add one per branch. The scan
 * reads RE2 syntax (after translateRegExp) and errs on the large side where the syntax is unusual, since
 * RE2 refuses what the scan misreads anyway.
 */

const COUNTED_REPEAT = /^\{(\d+)(,(\d*))?\}/;

interface Group {
  branches: number;
  /** Size of the branches before the current one, separators included. */
  closed: number;
  current: number;
  /** Size of the last atom of the current branch, which a following quantifier applies to. */
  last: number;
}

/** Index after the bracket class that starts at `start` (`[`), or the end of the source. */
function classEnd(source: string, start: number): number {
  let index = start + 1;
  if (source[index] === '^') index += 1;
  if (source[index] === ']') index += 1;
  while (index < source.length && source[index] !== ']') {
    if (source[index] === '\\') index += 2;
    else if (source.startsWith('[:', index)) {
      const close = source.indexOf(':]', index + 2);
      index = close < 0 ? source.length : close + 2;
    } else index += 1;
  }
  return index + 1;
}

/** Index after the escape that starts at `start` (`\`); `\Q…\E` is returned as its literal length. */
function escapeEnd(source: string, start: number): { end: number; runes: number } {
  const kind = source[start + 1];
  if (kind === 'Q') {
    const close = source.indexOf('\\E', start + 2);
    const end = close < 0 ? source.length : close + 2;
    return { end, runes: Math.max(1, (close < 0 ? source.length : close) - start - 2) };
  }
  if ((kind === 'p' || kind === 'P' || kind === 'x') && source[start + 2] === '{') {
    const close = source.indexOf('}', start + 3);
    return { end: close < 0 ? source.length : close + 1, runes: 1 };
  }
  if (kind === 'p' || kind === 'P') return { end: start + 3, runes: 1 };
  if (kind === 'x') return { end: start + 4, runes: 1 };
  return { end: start + 2, runes: 1 };
}

function repeated(size: number, min: number, max: number | undefined): number {
  if (max === undefined) return min === 0 ? 2 + size : 1 + min * size;
  return max * size + Math.max(0, max - min);
}

function groupSize(group: Group): number {
  return group.closed + group.current + (group.branches - 1);
}

/** The bound of RE2's program size for `source` (RE2 syntax). */
export function regexProgramSize(source: string): number {
  const stack: Group[] = [{ branches: 1, closed: 0, current: 0, last: 0 }];
  const top = (): Group => stack[stack.length - 1];
  const atom = (size: number): void => {
    top().current += size;
    top().last = size;
  };
  const quantify = (size: number): void => {
    const group = top();
    group.current += size - group.last;
    group.last = size;
  };
  let index = 0;
  while (index < source.length) {
    const char = source[index];
    if (char === '\\') {
      const escape = escapeEnd(source, index);
      atom(escape.runes);
      index = escape.end;
    } else if (char === '[') {
      atom(1);
      index = classEnd(source, index);
    } else if (char === '(') {
      stack.push({ branches: 1, closed: 0, current: 0, last: 0 });
      index += 1;
      if (source[index] === '?') {
        // A flag group or a named one: its header is no atom. `(?i)` alone sets flags and holds nothing.
        while (index < source.length && source[index] !== ':' && source[index] !== ')' && source[index] !== '>') index += 1;
        if (source[index] === ':' || source[index] === '>') index += 1;
      }
    } else if (char === ')') {
      const group = stack.length > 1 ? stack.pop()! : top();
      atom(2 + groupSize(group));
      index += 1;
    } else if (char === '|') {
      const group = top();
      group.closed += group.current;
      group.current = 0;
      group.last = 0;
      group.branches += 1;
      index += 1;
    } else if (char === '*' || char === '+' || char === '?') {
      quantify(char === '*' ? 2 + top().last : 1 + top().last);
      index += 1;
      if (source[index] === '?') index += 1;
    } else if (char === '{' && COUNTED_REPEAT.test(source.slice(index, index + 24))) {
      const [whole, min, comma, max] = COUNTED_REPEAT.exec(source.slice(index, index + 24))!;
      const upper = comma === undefined ? Number(min) : max === '' ? undefined : Number(max);
      quantify(repeated(top().last, Number(min), upper));
      index += whole.length;
      if (source[index] === '?') index += 1;
    } else {
      atom(1);
      index += 1;
    }
  }
  while (stack.length > 1) {
    const group = stack.pop()!;
    atom(2 + groupSize(group));
  }
  return groupSize(top());
}
