import { anyGlobMatches, globMatches, modelGlobListProblems, modelGlobProblem } from './model-glob';

describe('globMatches', () => {
  it.each([
    ['openai/*', 'openai/gpt-4o', true],
    ['openai/*', 'openai/', true],
    ['openai/*', 'anthropic/claude-3', false],
    ['anthropic/claude-*', 'anthropic/claude-3-5-sonnet', true],
    ['anthropic/claude-*', 'anthropic/claude', false],
    ['*/gpt-4o', 'azure/gpt-4o', true],
    ['*/gpt-4o', 'azure/gpt-4o-mini', false],
    ['huggingface/*', 'huggingface/meta-llama/Llama-3', true],
    ['openai/gpt-4o', 'openai/gpt-4o', true],
    ['openai/gpt-4o', 'openai/gpt-4o-mini', false],
    ['openai/gpt-4o', 'OpenAI/gpt-4o', false],
    ['*/*mini*', 'openai/gpt-4o-mini-2024', true],
    ['a*b*c/x', 'abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbd/x', false],
  ])('%s against %s is %s', (glob, text, expected) => {
    expect(globMatches(glob, text)).toBe(expected);
  });

  it('stays linear on adversarial inputs', () => {
    const glob = `${'a*'.repeat(50)}/b`;
    const text = `${'a'.repeat(5000)}/c`;
    const started = process.hrtime.bigint();
    expect(globMatches(glob, text)).toBe(false);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2000);
  });

  it('matches when any glob of a list does', () => {
    expect(anyGlobMatches(['openai/*', 'anthropic/claude-*'], 'anthropic/claude-3')).toBe(true);
    expect(anyGlobMatches([], 'openai/gpt-4o')).toBe(false);
  });
});

describe('modelGlobProblem', () => {
  it.each(['openai/*', '*/*', 'anthropic/claude-*', 'ollama/llama3.1:8b', 'huggingface/meta-llama/*'])('accepts %s', (glob) => {
    expect(modelGlobProblem(glob)).toBeUndefined();
  });

  it.each([
    ['', 'must be a non-empty string'],
    ['openai', '"openai" must be provider/model (e.g. openai/* or anthropic/claude-*)'],
    ['/gpt-4o', '"/gpt-4o" must be provider/model (e.g. openai/* or anthropic/claude-*)'],
    ['openai/', '"openai/" must be provider/model (e.g. openai/* or anthropic/claude-*)'],
    ['openai/gpt 4', '"openai/gpt 4" may hold only letters, digits, . _ : @ + - / and *'],
    ['openai/[abc]', '"openai/[abc]" may hold only letters, digits, . _ : @ + - / and *'],
    ['openai/**', '"openai/**" has a repeated *: one * already matches any run of characters'],
  ])('refuses %j', (glob, message) => {
    expect(modelGlobProblem(glob)).toBe(message);
  });

  it('refuses non-strings and overlong globs', () => {
    expect(modelGlobProblem(3)).toBe('must be a non-empty string');
    expect(modelGlobProblem(`openai/${'a'.repeat(200)}`)).toBe('must be at most 200 characters');
  });

  it('names the index of each bad glob of a list', () => {
    expect(modelGlobListProblems('models', ['openai/*', 'bad', 'x/ y'])).toEqual([
      'models[1]: "bad" must be provider/model (e.g. openai/* or anthropic/claude-*)',
      'models[2]: "x/ y" may hold only letters, digits, . _ : @ + - / and *',
    ]);
  });
});
