/**
 * Globs on `provider/model`: `*` matches any run of characters (a `/` too, for model names such as
 * Hugging Face's `org/name`); every other character matches itself, case-sensitively. Matching is linear
 * in the input (no regular expression, so no backtracking on patterns with many stars).
 */
const GLOB_CHARACTERS = /^[A-Za-z0-9._:@+*/-]+$/;
const MAX_GLOB_LENGTH = 200;

/** Why the glob is refused, or undefined when it is valid. */
export function modelGlobProblem(glob: unknown): string | undefined {
  if (typeof glob !== 'string' || glob.length === 0) return 'must be a non-empty string';
  if (glob.length > MAX_GLOB_LENGTH) return `must be at most ${MAX_GLOB_LENGTH} characters`;
  if (!GLOB_CHARACTERS.test(glob)) return `"${glob}" may hold only letters, digits, . _ : @ + - / and *`;
  const slash = glob.indexOf('/');
  if (slash <= 0 || slash === glob.length - 1) return `"${glob}" must be provider/model (e.g. openai/* or anthropic/claude-*)`;
  if (glob.includes('**')) return `"${glob}" has a repeated *: one * already matches any run of characters`;
  return undefined;
}

/** Problems of a list of globs, each naming its index under `field`. */
export function modelGlobListProblems(field: string, globs: readonly unknown[]): string[] {
  return globs.flatMap((glob, index) => {
    const problem = modelGlobProblem(glob);
    return problem ? [`${field}[${index}]: ${problem}`] : [];
  });
}

/** Whether `glob` matches the whole of `text` (the classic two-pointer wildcard match). */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (t < text.length) {
    if (g < glob.length && glob[g] !== '*' && glob[g] === text[t]) {
      g++;
      t++;
    } else if (g < glob.length && glob[g] === '*') {
      starAt = g++;
      resumeAt = t;
    } else if (starAt >= 0) {
      g = starAt + 1;
      t = ++resumeAt;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}

export function anyGlobMatches(globs: readonly string[], text: string): boolean {
  return globs.some((glob) => globMatches(glob, text));
}
