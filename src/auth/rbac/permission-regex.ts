import { RE2JS } from 're2js';
import { regexProgramSize } from './regex-program-size';

/**
 * `%r{...}` permissions on RE2's linear-time engine (re2js, a pure-JavaScript port): no backtracking, so
 * no pattern can stall the event loop on a hostile path, whatever its nesting. Pure.
 *
 * Linear is not yet cheap: RE2 builds its automaton lazily, and a pattern like `.*a.{60}` makes it build
 * a new state at nearly every character of a hostile path (~57 ms on 16 KiB). So a pattern is accepted
 * only when its whole automaton is small enough to build at load; a check then walks ready tables.
 */

/** Above this many automaton states a pattern is refused; real path patterns need a few dozen. */
export const MAX_REGEX_STATES = 256;

/**
 * Above this program size (counted repeats multiplied out) a pattern is refused before RE2 compiles it: at
 * this size the slowest compile measured (alternated Unicode classes) takes ~18 ms; real path patterns stay
 * under 200 (a UUID is 36, `users/[a-z0-9_-]{1,64}/files/.*` 143).
 */
export const MAX_REGEX_PROGRAM_SIZE = 1_000;

/**
 * Bound on the work of building one automaton (NFA positions visited), which caps the load time of a
 * hostile pattern at a few milliseconds.
 */
const MAX_BUILD_WORK = 25_000;

// re2js internals the build relies on (RE2Flags.ANCHOR_BOTH, DFA's end-of-text rune, Utils.EMPTY_BEGIN_*), which
// is why package.json pins its exact version; the spec's "never adds a state" test checks them on an upgrade.
const ANCHOR_BOTH = 2;
const END_OF_TEXT = -1;
const START_OF_TEXT_INPUT = { context: (): number => 1 | 4 };
const MAX_RUNE = 0x10ffff;
const NEWLINE = 10;
/** RE2's `\w`: a step records whether its rune was a word character, so each class is tried both ways. */
const WORD_RANGES: ReadonlyArray<readonly [number, number]> = [
  [48, 57],
  [65, 90],
  [95, 95],
  [97, 122],
];

/** `programSize`: the instructions RE2 compiled for it (0 when refused before compiling). */
export type PathRegexResult =
  | { ok: true; regex: RE2JS; programSize: number }
  | { ok: false; refusal: 'syntax' | 'size' | 'states'; reason: string; programSize: number };

const isWordRune = (rune: number): boolean => WORD_RANGES.some(([low, high]) => rune >= low && rune <= high);

/** One rune of [low, high] per distinct (word, newline) kind: the only facts a step reads besides the class. */
function representatives(low: number, high: number): number[] {
  const candidates = [low, NEWLINE];
  for (const [first, last] of WORD_RANGES) candidates.push(first - 1, first, last + 1);
  const byKind = new Map<string, number>();
  for (const rune of candidates) {
    if (rune < low || rune > high) continue;
    const kind = `${isWordRune(rune)}:${rune === NEWLINE}`;
    if (!byKind.has(kind)) byKind.set(kind, rune);
  }
  return [...byKind.values()];
}

/**
 * Builds every state of the anchored automaton the matcher will use, so no request builds one later.
 * False when it needs more than MAX_REGEX_STATES states or MAX_BUILD_WORK.
 */
function buildAutomaton(regex: RE2JS): boolean {
  const dfa = regex.re2().dfa;
  const bounds = dfa.classBounds;
  const runesByClass: number[][] = [];
  for (let cls = 0; cls < dfa.numClasses; cls++) {
    const low = cls === 0 ? 0 : bounds[cls - 1];
    const high = cls < bounds.length ? bounds[cls] - 1 : MAX_RUNE;
    runesByClass.push(low <= high ? representatives(low, high) : []);
  }
  const start = dfa.start(START_OF_TEXT_INPUT, 0);
  if (start === null) return false;
  const seen = new Set<unknown>([start]);
  const pending = [start];
  let work = 0;
  while (pending.length > 0) {
    const state = pending.pop();
    work += state.nfaStates.length * (dfa.numClasses + 1);
    if (work > MAX_BUILD_WORK) return false;
    if (dfa.step(state, dfa.numClasses, END_OF_TEXT, ANCHOR_BOTH) === null) return false;
    for (let cls = 0; cls < dfa.numClasses; cls++) {
      for (const rune of runesByClass[cls]) {
        const next = dfa.step(state, cls, rune, ANCHOR_BOTH);
        if (next === null) return false;
        if (seen.has(next)) continue;
        if (seen.size >= MAX_REGEX_STATES) return false;
        seen.add(next);
        pending.push(next);
      }
    }
  }
  return true;
}

/**
 * Compiles a permission's pattern (JavaScript syntax where RE2 has an equivalent) to match the WHOLE
 * resource path. Backreferences and lookaround have no linear-time evaluation and are refused. A pattern
 * whose program would pass `maxProgramSize` is refused before RE2 compiles it; `programSize` reports what
 * the compile cost, so a record can bound the sum.
 */
export function compilePathRegex(source: string, maxProgramSize = MAX_REGEX_PROGRAM_SIZE): PathRegexResult {
  let regex: RE2JS;
  let programSize = 0;
  try {
    const translated = RE2JS.translateRegExp(source);
    programSize = regexProgramSize(translated);
    if (programSize > maxProgramSize) {
      return { ok: false, refusal: 'size', reason: `too large: its counted repeats expand past ${maxProgramSize} instructions`, programSize: 0 };
    }
    regex = RE2JS.compile(`^(?:${translated})$`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, refusal: 'syntax', reason: `not supported by the linear-time (RE2) engine: ${message.replace(/^error parsing regexp: /, '')}`, programSize };
  }
  // A one-pass pattern (and a plain literal) is run by a single thread, with no automaton to build.
  const engine = regex.re2();
  if (engine.onepass !== null || engine.prefixComplete) return { ok: true, regex, programSize };
  if (!buildAutomaton(regex)) {
    return { ok: false, refusal: 'states', reason: `too complex: its matcher would need more than ${MAX_REGEX_STATES} states`, programSize };
  }
  return { ok: true, regex, programSize };
}
